export { invokeProxy, proxyItems, type ProxyItem, type ProxyRequestOptions } from './proxy-client';
