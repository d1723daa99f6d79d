/**
 * One form definition per layout, shared by every review form of that shape (#27: a definition per
 * form cost one platform call per form). The content of one account's form (form-content.ts) is split
 * into a skeleton, where every element draws its content from the instance through the platform's
 * FORM_INPUT data source, and the instance's inputs, one per element (its label, description, value
 * or options as JSON). The skeleton depends only on the shape (which attributes, how many candidates
 * shown), so a run's forms share a handful of definitions; the simulator renders an instance from
 * both and rejects one whose inputs do not fill its definition (src/simulator/form-render.ts).
 */
import { createHash } from 'node:crypto';

/** Prefix of the inputs that carry element content. */
const ELEMENT_INPUT_PREFIX = 'e.';
const CONTENT_KEYS = ['label', 'description', 'default', 'trueLabel', 'falseLabel'] as const;

type Element = Record<string, unknown>;

export interface SplitForm {
  /** The definition's elements: structure only. */
  skeleton: Element[];
  /** Per element: JSON of its content, keyed by input id. */
  inputs: Record<string, string>;
  /** Ids of the inputs the skeleton draws from. */
  inputIds: string[];
}

function obj(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export function splitForm(elements: readonly Element[]): SplitForm {
  const inputs: Record<string, string> = {};
  const inputIds: string[] = [];
  const walk = (list: readonly Element[]): Element[] =>
    list.map((el) => {
      const config = { ...obj(el['config']) };
      const content: Record<string, unknown> = {};
      for (const k of CONTENT_KEYS)
        if (k in config) {
          content[k] = config[k];
          delete config[k];
        }
      const ds = obj(config['dataSource']);
      if (ds['dataSourceType'] === 'STATIC') content['options'] = obj(ds['config'])['options'] ?? [];
      const id = `${ELEMENT_INPUT_PREFIX}${String(el['key'] ?? el['id'])}`;
      inputs[id] = JSON.stringify(content);
      inputIds.push(id);
      config['dataSource'] = { dataSourceType: 'FORM_INPUT', config: { formInput: id } };
      if (Array.isArray(config['formElements'])) config['formElements'] = walk(config['formElements'] as Element[]);
      return { ...el, config };
    });
  return { skeleton: walk(elements), inputs, inputIds };
}

/** The layout's key: the same for every form of the same shape. */
export function layoutKey(skeleton: readonly Element[], declaredInputs: readonly string[]): string {
  return createHash('sha256')
    .update(JSON.stringify([skeleton, declaredInputs]))
    .digest('hex')
    .slice(0, 16);
}
