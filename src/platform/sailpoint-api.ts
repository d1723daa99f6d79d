// The parts of sailpoint-api-client we use, taken from its v3 and beta modules and its root
// Configuration. The package's index also loads its v2024 module (3 MB of generated code): without
// it the upload package's index.js is 3.8 MB instead of 5.1 and loads in about 0.34 s instead of
// 0.45 (2-core host, 2026-11-30), on every cold start of the connector and in every test file.
export { AccessProfilesApi, AccountsApi, SearchApi, SourcesApi, WorkflowsApi } from 'sailpoint-api-client/dist/v3/api';
export type { CreateWorkflowRequest, Search } from 'sailpoint-api-client/dist/v3/api';
export { CustomFormsBetaApi, SourcesBetaApi, TaskManagementBetaApi } from 'sailpoint-api-client/dist/beta/api';
export type { CreateFormDefinitionRequestBeta } from 'sailpoint-api-client/dist/beta/api';
export { Configuration } from 'sailpoint-api-client/dist/configuration';
