import { readApiUseSettings, type ApiUseSettings } from '../core/config/api-use-settings';
import { ConfigReader } from '../core/config/config-reader';

/**
 * What the platform adapter needs from the configuration object the platform (or the proxy
 * client) sends: the API-use settings (names, defaults and limits owned by
 * core/config/api-use-settings.ts) and the authoritative source names.
 */
export interface PlatformSettings extends ApiUseSettings {
  /** Authoritative account source names (exact, case-sensitive). */
  sources: string[];
}

/** Reads and validates the platform settings; throws FusionError CONFIG_INVALID naming each field. */
export function readPlatformSettings(config: Record<string, unknown>): PlatformSettings {
  const r = new ConfigReader();
  const settings = readApiUseSettings(r, config);
  const sources = r.stringList(config, 'sources');
  r.assertValid();
  return { ...settings, sources };
}

/** Page size for an endpoint: Batch size when batching is on, clamped to the endpoint's maximum. */
export function pageSizeFor(
  settings: Pick<PlatformSettings, 'enableBatching' | 'batchSize'>,
  endpointMax: number,
): number {
  if (!settings.enableBatching) return endpointMax;
  return Math.max(1, Math.min(settings.batchSize, endpointMax));
}
