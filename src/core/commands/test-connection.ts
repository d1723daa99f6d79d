import type { CommandOutput } from '../command-runner';
import type { CoreCommand } from '../core-runner';
import { parseFusionConfig } from '../config/fusion-config';
import { FusionError } from '../errors';
import { ownSourceAmong, requireInstanceId } from '../aggregation/source-resolution';
import type { PlatformFactory, PlatformSource } from '../ports/platform';

const MAX_NAMES_SHOWN = 50;

function quoteList(names: string[]): string {
  const shown = names.slice(0, MAX_NAMES_SHOWN).map((n) => JSON.stringify(n));
  return names.length > MAX_NAMES_SHOWN
    ? `${shown.join(', ')} and ${names.length - MAX_NAMES_SHOWN} more`
    : shown.join(', ');
}

function configuredSources(config: Record<string, unknown>): string[] {
  const raw = config.sources;
  return Array.isArray(raw) ? raw.filter((s): s is string => typeof s === 'string' && s !== '') : [];
}

/**
 * std:test-connection: validates the whole configuration, proves the credentials with GET
 * {baseurl}/v3/sources (the spec's call for checking credentials), then checks the configured
 * sources against what exists. A configured name that matches no source exactly (case-sensitive)
 * fails the test with the names that do exist, since aggregation would silently read nothing from
 * it. A disabled managed source is reported as a warning: its accounts will not be aggregated.
 */
export function createTestConnectionCommand(platform: PlatformFactory): CoreCommand {
  return async function* testConnection(_input, config, ctx): AsyncIterable<CommandOutput> {
    // Test connection is the operator's pre-flight check: a configuration every aggregation would
    // reject must not get a green result, so the whole configuration is validated first.
    const parsed = parseFusionConfig(config);
    // Every other command needs the connector's own source, found by its instance id: without it,
    // a green test would only defer the failure to the first aggregation.
    requireInstanceId(parsed);
    // A fresh token-endpoint answer: a token the process already holds would not prove the credentials still work.
    const session = platform(config, { signal: ctx.signal, logger: ctx.logger, purpose: 'check' });
    try {
      const all: PlatformSource[] = [];
      for await (const s of session.listSources({ signal: ctx.signal })) all.push(s);
      const own = ownSourceAmong(all, parsed);
      const byName = new Map(all.map((s) => [s.name, s]));
      const wanted = configuredSources(config);
      const missing = wanted.filter((n) => !byName.has(n));
      if (missing.length > 0) {
        const existing = all.map((s) => s.name).sort();
        throw new FusionError(
          'SOURCE_NOT_FOUND',
          `Configured source${missing.length > 1 ? 's' : ''} not found on the platform: ${quoteList(missing)}. Names must match exactly, including case. Sources that exist: ${existing.length ? quoteList(existing) : '(none)'}.`,
          { missing, existing: existing.slice(0, MAX_NAMES_SHOWN) },
        );
      }
      const disabled = wanted.filter((n) => byName.get(n)?.enabled === false);
      const warnings = disabled.map(
        (n) =>
          `Source ${JSON.stringify(n)} is disabled (Enabled = Off): its accounts will not be aggregated until it is enabled.`,
      );
      for (const w of warnings) ctx.logger.warn({ command: 'std:test-connection' }, w);
      yield {
        status: 'success',
        // The platform shows only the message: the warnings' text goes in it, not just their number.
        message: `Connected to the platform API; ${all.length} source${all.length === 1 ? '' : 's'} visible to the access token; the connector's source is ${JSON.stringify(own.name)}.${warnings.length ? ` ${warnings.length === 1 ? 'Warning' : `${warnings.length} warnings`}: ${warnings.join(' ')}` : ''}`,
        sourcesVisible: all.length,
        connectorSource: own.name,
        configuredSources: wanted,
        disabledSources: disabled,
        warnings,
      };
    } finally {
      session.close();
    }
  };
}
