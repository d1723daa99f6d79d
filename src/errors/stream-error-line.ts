/**
 * How the proxy server tells why a started response failed. Once bytes are out, the status line
 * is spent; the server then writes one last line, this prefix and `{"code","error"}`, and resets
 * the connection. The line is deliberately not JSON: a client that knows only the wire contract
 * fails to parse it (and sees the reset), so it can never take it for an item; our proxy client
 * reads it and raises the server's code with its message.
 */
const STREAM_ERROR_PREFIX = '#fusion-error ';

export interface StreamErrorLine {
  code: string;
  error: string;
}

export function formatStreamErrorLine(e: StreamErrorLine): string {
  // One line whatever the message holds: JSON escapes every newline.
  return `${STREAM_ERROR_PREFIX}${JSON.stringify({ code: e.code, error: e.error })}\n`;
}

/** The error a line carries, or undefined when it is not an error line (or a malformed one). */
export function parseStreamErrorLine(line: string): StreamErrorLine | undefined {
  if (!line.startsWith(STREAM_ERROR_PREFIX)) return undefined;
  try {
    const v = JSON.parse(line.slice(STREAM_ERROR_PREFIX.length)) as unknown;
    if (
      v &&
      typeof v === 'object' &&
      typeof (v as StreamErrorLine).code === 'string' &&
      typeof (v as StreamErrorLine).error === 'string'
    ) {
      return { code: (v as StreamErrorLine).code, error: (v as StreamErrorLine).error };
    }
  } catch {
    // Not ours after all: the caller reports the line as invalid JSON.
  }
  return undefined;
}
