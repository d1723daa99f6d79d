// `fusion-proxy match`'s command line, through node:util's parser, and its usage errors.
import { parseArgs } from 'node:util';
import { errorMessage } from '../core/errors';

export interface Options {
  identities: string;
  accounts: string;
  config: string;
  truth?: string;
  report?: string;
  /** Candidates kept per account; undefined: all of them. */
  topK?: number;
  summaryJson: boolean;
}

/** Bad usage or bad input: reported as one line, exit code 2. */
export class InputError extends Error {}
/** Bad command line: the usage text follows the message. */
export class UsageError extends InputError {}

const OPTIONS = {
  identities: { type: 'string' },
  accounts: { type: 'string' },
  config: { type: 'string' },
  truth: { type: 'string' },
  report: { type: 'string' },
  'top-k': { type: 'string' },
  'summary-json': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** node:util's parser; its errors are reworded as this command's usage errors (exit code 2). */
function parseOptions(argv: string[]): ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS }>> {
  try {
    return parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const flag = /'(-[^' ]+)/.exec(errorMessage(e))?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      // Missing, or followed by something that starts with "-" (which the parser will not take as a value).
      const next = argv[argv.indexOf(flag) + 1];
      if (flag === '--top-k' && next !== undefined)
        throw new UsageError(`option --top-k needs a whole number of at least 1, got "${next}"`);
      throw new UsageError(
        `option ${flag} needs ${flag === '--top-k' ? 'a number' : 'a file name'}` +
          (next !== undefined ? ` (for a name that starts with "-", write ${flag}=${next})` : ''),
      );
    }
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown option "${flag}"`);
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
      throw new UsageError(`unexpected argument "${/'([^']*)'/.exec(errorMessage(e))?.[1] ?? ''}"`);
    throw new UsageError(errorMessage(e));
  }
}

export function readOptions(argv: string[]): Options | 'help' {
  const { values } = parseOptions(argv);
  if (values.help) return 'help';
  for (const [name, value] of Object.entries(values))
    if (value === '') throw new UsageError(`option --${name} needs ${name === 'top-k' ? 'a number' : 'a file name'}`);
  let topK: number | undefined;
  if (values['top-k'] !== undefined) {
    topK = Number(values['top-k']);
    if (!Number.isInteger(topK) || topK < 1)
      throw new UsageError(`option --top-k needs a whole number of at least 1, got "${values['top-k']}"`);
  }
  const { identities, accounts, config } = values;
  if (!identities) throw new UsageError('option --identities is required');
  if (!accounts) throw new UsageError('option --accounts is required');
  if (!config) throw new UsageError('option --config is required');
  return {
    identities,
    accounts,
    config,
    truth: values.truth,
    report: values.report,
    topK,
    summaryJson: values['summary-json'] ?? false,
  };
}
