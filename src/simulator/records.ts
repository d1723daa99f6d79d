/** The simulator's internal records; `views.ts` turns them into the platform's API models. */

export interface SchemaAttributeRecord {
  name: string;
  type: 'STRING' | 'LONG' | 'INT' | 'BOOLEAN';
  isMulti: boolean;
  isEntitlement: boolean;
  description?: string;
}

export interface SourceRecord {
  id: string;
  name: string;
  description: string;
  authoritative: boolean;
  /** False for a managed source whose Enabled setting is off (shown as connectorAttributes.enabled=false). */
  enabled: boolean;
  connector: string;
  type: string;
  owner: { id: string; name: string };
  connectorAttributes: Record<string, unknown>;
  schemaAttributes: SchemaAttributeRecord[];
  identityAttribute: string;
  displayAttribute: string;
  created: string;
  modified: string;
}

export interface AccountRecord {
  id: string;
  sourceId: string;
  nativeIdentity: string;
  name: string;
  uuid?: string;
  identityId?: string;
  disabled: boolean;
  locked: boolean;
  isMachine: boolean;
  manuallyCorrelated: boolean;
  attributes: Record<string, unknown>;
  created: string;
  modified: string;
}

export interface IdentityRecord {
  id: string;
  name: string;
  attributes: Record<string, unknown>;
  /** Ids of access profiles assigned to the identity. */
  access: string[];
  inactive: boolean;
  created: string;
  modified: string;
}

export interface AccessProfileRecord {
  id: string;
  name: string;
  description: string;
  sourceId: string;
  ownerId: string;
  enabled: boolean;
  requestable: boolean;
  created: string;
  modified: string;
}

/** Form definitions, instances and workflows are stored as the JSON the client sent, plus server fields. */
export type JsonObject = Record<string, unknown>;

export interface WorkflowRun {
  workflowId: string;
  executionId: string;
  input: unknown;
  at: string;
}

export type TaskOutcome =
  | { kind: 'succeed'; afterPolls: number; warning?: string }
  | { kind: 'fail'; afterPolls: number; message: string }
  | { kind: 'never' };

export interface TaskRecord {
  id: string;
  sourceId: string;
  type: string;
  created: string;
  launched: string | null;
  completed: string | null;
  polls: number;
  outcome: TaskOutcome;
  completionStatus: 'SUCCESS' | 'WARNING' | 'ERROR' | 'TERMINATED' | null;
  messages: { type: 'INFO' | 'WARN' | 'ERROR'; text: string }[];
  /** An aggregation the simulator plays through the connector: settled once ingestion ended. */
  playing?: { settled: boolean; summary?: string; error?: string };
}

/** One planted duplicate: an account and what it duplicates (an identity id or another account id). */
export interface GroundTruthRow {
  accountId: string;
  candidateId: string;
  kind: 'identity' | 'account';
  variation: string;
}
