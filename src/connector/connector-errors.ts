import { ConnectorError, ConnectorErrorType } from '@sailpoint/connector-sdk';
import { isFusionError } from '../core/errors';
import { ERROR_CODES, type SdkErrorType } from '../errors/error-codes';
import { redactText } from '../secrets/redaction';

const SDK_TYPES: Record<SdkErrorType, ConnectorErrorType> = {
  generic: ConnectorErrorType.Generic,
  notFound: ConnectorErrorType.NotFound,
};

/**
 * The platform understands ConnectorError; its type comes from the error-code table, so a code
 * means the same to the platform in direct mode and through the proxy (a missing account is
 * `notFound` both ways, and the platform removes it instead of failing the read).
 */
export function toConnectorError(e: unknown, secrets: readonly string[] = []): unknown {
  if (e instanceof ConnectorError) return e;
  if (isFusionError(e)) {
    // A message quoting the configuration's secret (an account id, an expression) reaches the platform redacted.
    const err = new ConnectorError(redactText(e.message, secrets), SDK_TYPES[ERROR_CODES[e.code].sdkType]);
    (err as Error & { cause?: unknown; code?: string }).cause = e;
    return err;
  }
  return e;
}
