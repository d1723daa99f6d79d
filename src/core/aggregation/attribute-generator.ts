/**
 * Attribute definitions: Velocity expressions compiled once per run, rendered per account in
 * configuration order (a later definition may use an earlier one's value).
 *
 * - normal: rendered when the account has no value yet, or always with `refresh`.
 * - unique: rendered with $counter empty, then 1, 2, ... (padded to `digits`, appended when the
 *   expression does not use $counter) until the value is free in the registry; at most maxAttempts.
 * - uuid: a random UUID, redrawn on collision.
 * - counter: the next value of a persistent counter (see CounterStore), exposed as $counter.
 * Values of unique, uuid and counter attributes never change once the account has them.
 */
import { randomUUID } from 'node:crypto';
import type { AttributeDefinition, FusionConfig } from '../config/fusion-config';
import { FusionError } from '../errors';
import { compileTemplate, TemplateError, type CompiledTemplate } from '../templates/velocity-template';
import { postProcess } from '../templates/post-process';
import type { CounterStore } from './counter-store';
import type { UniqueRegistry } from './unique-registry';

export interface GenerationSubject {
  /** For error messages: the account being built. */
  label: string;
  /** Velocity context: merged attributes and helpers ($accounts, $sources, $identity). */
  context: Record<string, unknown>;
  /** Attributes the connector account already has (empty for a new account). */
  existing: Record<string, unknown>;
  /** Definition types left for a later aggregation (std:account:create cannot see the registry). */
  skipTypes?: readonly AttributeDefinition['type'][];
  /**
   * Keep every value the account has, `refresh` definitions included, and render only missing
   * ones: for a connector account none of whose source accounts was read in this run (limited or
   * filtered run, or an account made by std:account:create), whose context lacks the source data.
   */
  keepExisting?: boolean;
}

interface Prepared {
  def: AttributeDefinition;
  template?: CompiledTemplate;
}

const pad = (n: number, digits: number): string => String(n).padStart(digits, '0');
const hasValue = (v: unknown): boolean => v !== undefined && v !== null && v !== '';

export class AttributeGenerator {
  private readonly prepared: Prepared[];
  /** Per attribute and base value: the next counter worth trying (see renderUnique). */
  private readonly nextCounter = new Map<string, Map<string, number>>();

  constructor(
    private readonly config: Pick<FusionConfig, 'attributeDefinitions' | 'maxAttempts'>,
    private readonly registry: UniqueRegistry,
    private readonly counters: CounterStore,
  ) {
    this.prepared = config.attributeDefinitions.map((def) => {
      if (def.type === 'uuid' && def.expression.trim() === '') return { def };
      try {
        return { def, template: compileTemplate(def.expression) };
      } catch (e) {
        const err = e as TemplateError;
        throw new FusionError(
          'TEMPLATE_ERROR',
          `Attribute definition "${def.name}": syntax error in expression ${JSON.stringify(def.expression)}: ${err.message}`,
          { attribute: def.name, expression: def.expression, kind: 'syntax' },
        );
      }
    });
  }

  /** Attribute names holding registered values (unique, uuid, counter). */
  static registeredNames(defs: AttributeDefinition[]): string[] {
    return defs.filter((d) => d.type !== 'normal').map((d) => d.name);
  }

  /** Returns the defined attributes (existing stable values kept, others generated). */
  generate(subject: GenerationSubject): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    // Copied on the first value a later definition can see: the caller's context is never written.
    let context = subject.context;
    let copied = false;
    const last = this.prepared.length - 1;
    for (let i = 0; i <= last; i++) {
      const { def, template } = this.prepared[i]!;
      const current = subject.existing[def.name];
      if (subject.skipTypes?.includes(def.type) && !hasValue(current)) continue;
      let value: unknown;
      if (hasValue(current) && (def.type !== 'normal' || !def.refresh || subject.keepExisting)) value = current;
      else if (def.type === 'normal') value = this.renderNormal(def, template as CompiledTemplate, context, subject);
      else if (def.type === 'unique') value = this.renderUnique(def, template as CompiledTemplate, context, subject);
      else if (def.type === 'uuid') value = this.drawUuid(def, template, context, subject);
      else value = this.renderCounter(def, template as CompiledTemplate, context, subject);
      if (hasValue(value)) {
        out[def.name] = value;
        if (i < last) {
          if (!copied) {
            context = { ...context };
            copied = true;
          }
          context[def.name] = value;
        }
      }
    }
    return out;
  }

  private render(
    def: AttributeDefinition,
    template: CompiledTemplate,
    context: Record<string, unknown>,
    subject: GenerationSubject,
    counter?: string,
  ): string {
    try {
      return template.render(context, counter);
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e;
      throw new FusionError(
        'TEMPLATE_ERROR',
        `Attribute definition "${def.name}" failed for account ${subject.label}: ${e.kind} error in expression ${JSON.stringify(def.expression)}: ${e.message}`,
        { attribute: def.name, expression: def.expression, account: subject.label, kind: e.kind },
      );
    }
  }

  private renderNormal(
    def: AttributeDefinition,
    template: CompiledTemplate,
    context: Record<string, unknown>,
    subject: GenerationSubject,
  ): string {
    return postProcess(this.render(def, template, context, subject, ''), def);
  }

  private renderUnique(
    def: AttributeDefinition,
    template: CompiledTemplate,
    context: Record<string, unknown>,
    subject: GenerationSubject,
  ): string | undefined {
    const raw = template.usesCounter ? '' : this.render(def, template, context, subject, '');
    const first = template.usesCounter
      ? postProcess(this.render(def, template, context, subject, ''), def)
      : postProcess(raw, def);
    if (first === '') return undefined;
    if (this.registry.claim(def.name, first)) return first;
    // Counters below the one remembered for this base were all found taken earlier in this run
    // (values are never freed during a run), so the search resumes there: same values as a
    // search from 1, without re-rendering a long collision chain for every account.
    let next = this.nextCounter.get(def.name);
    if (!next) this.nextCounter.set(def.name, (next = new Map()));
    const key = first;
    let last = first;
    let reserved: Map<number, string> | undefined;
    for (let attempt = Math.max(1, next.get(key) ?? 1); attempt < this.config.maxAttempts; attempt++) {
      const counter = pad(attempt, def.digits);
      let value: string;
      if (template.usesCounter) {
        value = postProcess(this.render(def, template, context, subject, counter), def);
      } else {
        // The counter is appended after truncation so that a long base never cuts it off.
        reserved ??= new Map();
        let base = reserved.get(counter.length);
        if (base === undefined) {
          base = postProcess(raw, def, counter.length);
          reserved.set(counter.length, base);
        }
        value = base + counter;
      }
      last = value;
      if (value !== '' && this.registry.claim(def.name, value)) {
        next.set(key, attempt + 1);
        return value;
      }
    }
    next.set(key, this.config.maxAttempts);
    throw new FusionError(
      'UNIQUE_EXHAUSTED',
      `Attribute definition "${def.name}": no unique value for account ${subject.label} after ${this.config.maxAttempts} attempts of expression ${JSON.stringify(def.expression)}; last value tried ${JSON.stringify(last)} (make the expression use $counter, or raise maxAttempts)`,
      {
        attribute: def.name,
        expression: def.expression,
        lastValue: last,
        account: subject.label,
        attempts: this.config.maxAttempts,
      },
    );
  }

  private drawUuid(
    def: AttributeDefinition,
    template: CompiledTemplate | undefined,
    context: Record<string, unknown>,
    subject: GenerationSubject,
  ): string {
    for (let attempt = 0; attempt < this.config.maxAttempts; attempt++) {
      const uuid = randomUUID();
      const value = template
        ? postProcess(this.render(def, template, { ...context, uuid, counter: uuid }, subject), def)
        : postProcess(uuid, def);
      if (value !== '' && this.registry.claim(def.name, value)) return value;
    }
    throw new FusionError(
      'UNIQUE_EXHAUSTED',
      `Attribute definition "${def.name}": no free uuid for account ${subject.label} after ${this.config.maxAttempts} attempts`,
      {
        attribute: def.name,
        expression: def.expression,
        account: subject.label,
      },
    );
  }

  private renderCounter(
    def: AttributeDefinition,
    template: CompiledTemplate,
    context: Record<string, unknown>,
    subject: GenerationSubject,
  ): string {
    let last = '';
    for (let attempt = 0; attempt < this.config.maxAttempts; attempt++) {
      const counter = pad(this.counters.next(def.name, def.counterStart), def.digits);
      const value = postProcess(this.render(def, template, context, subject, counter), def);
      last = value;
      // Counters are monotonic, so a taken value only happens when the persisted state was lost or
      // edited; the registry (rebuilt from the accounts) then still prevents a duplicate.
      if (value !== '' && this.registry.claim(def.name, value)) return value;
    }
    throw new FusionError(
      'UNIQUE_EXHAUSTED',
      `Attribute definition "${def.name}": counter values for account ${subject.label} were all taken after ${this.config.maxAttempts} attempts of expression ${JSON.stringify(def.expression)}; last value tried ${JSON.stringify(last)}`,
      { attribute: def.name, expression: def.expression, lastValue: last, account: subject.label },
    );
  }
}
