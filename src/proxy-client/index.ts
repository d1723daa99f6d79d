export { detectRole, isProxyEnabled, proxyEnabledWithoutUrl, type ConnectorRole, type RoleEnv } from './role';
export {
  invokeProxy,
  proxyItems,
  DEFAULT_PROXY_TIMEOUTS,
  type ProxyItem,
  type ProxyRequestOptions,
  type ProxyResult,
  type ProxyTimeouts,
} from './proxy-client';
export { ResponseParser, ResponseFormatError, type ParseEvent, type ParsedItem } from './response-parser';
export { displayUrl, redact } from './proxy-errors';
