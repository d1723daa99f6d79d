/**
 * Path templates of every platform endpoint we call. They are the `endpoint` label of the
 * platform metrics and appear in error messages, so ids never reach either.
 */
export const ENDPOINT = {
  token: '/oauth/token',
  sources: '/v3/sources',
  source: '/v3/sources/{id}',
  sourceSchemas: '/v3/sources/{id}/schemas',
  accounts: '/v3/accounts',
  account: '/v3/accounts/{id}',
  search: '/v3/search',
  loadAccounts: '/beta/sources/{id}/load-accounts',
  taskStatus: '/beta/task-status/{id}',
  formDefinitions: '/beta/form-definitions',
  formDefinition: '/beta/form-definitions/{id}',
  formInstances: '/beta/form-instances',
  formInstance: '/beta/form-instances/{id}',
  accessProfiles: '/v3/access-profiles',
  workflows: '/v3/workflows',
  workflow: '/v3/workflows/{id}',
  workflowTest: '/v3/workflows/{id}/test',
} as const;

/** Largest page each listing endpoint serves. */
export const PAGE_MAX = {
  sources: 250,
  accounts: 250,
  search: 10_000,
  formDefinitions: 250,
  formInstances: 250,
  accessProfiles: 250,
  workflows: 250,
} as const;

/**
 * Identities a baseline search asks for per page, whatever the batch size: the baseline is read page after page
 * (searchAfter), and at the batch size's 250 a 100k baseline took 400 sequential calls of a rate limit that bounds
 * real tenants (#27); a quarter of the platform's 10,000 keeps each answer a few MB (documents trimmed to
 * IDENTITY_FIELDS).
 */
export const IDENTITY_PAGE = 2_500;

/** Every endpoint and method we call: the platform metrics' series exist at 0 for these from the start. */
export const ENDPOINT_METHODS: ReadonlyArray<readonly [string, 'GET' | 'POST' | 'PATCH' | 'DELETE']> = [
  [ENDPOINT.token, 'POST'],
  [ENDPOINT.sources, 'GET'],
  [ENDPOINT.source, 'GET'],
  [ENDPOINT.source, 'PATCH'],
  [ENDPOINT.sourceSchemas, 'GET'],
  [ENDPOINT.accounts, 'GET'],
  [ENDPOINT.account, 'GET'],
  [ENDPOINT.search, 'POST'],
  [ENDPOINT.loadAccounts, 'POST'],
  [ENDPOINT.taskStatus, 'GET'],
  [ENDPOINT.formDefinitions, 'GET'],
  [ENDPOINT.formDefinitions, 'POST'],
  [ENDPOINT.formDefinition, 'DELETE'],
  [ENDPOINT.formInstances, 'GET'],
  [ENDPOINT.formInstances, 'POST'],
  [ENDPOINT.formInstance, 'GET'],
  [ENDPOINT.formInstance, 'PATCH'],
  [ENDPOINT.accessProfiles, 'GET'],
  [ENDPOINT.workflows, 'GET'],
  [ENDPOINT.workflows, 'POST'],
  [ENDPOINT.workflowTest, 'POST'],
];
