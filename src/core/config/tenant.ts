/**
 * The tenant a configuration talks to: the API host, e.g. acme.api.identitynow.com. One rule for
 * every key that is per tenant (the platform's rate-limit bucket, the run lock, the run's log).
 */
export function tenantOf(baseurl: string): string {
  try {
    return new URL(baseurl).host.toLowerCase();
  } catch {
    return baseurl;
  }
}
