/**
 * What a reviewer sees of a form instance: its definition's elements, with every element whose data
 * source is FORM_INPUT filled from the instance's input of that name (a JSON object of the element's
 * config: label, description, default...; `options`, or a JSON array, for a list of choices). An
 * instance whose inputs do not fill its definition is refused, as a platform would fail to show it.
 */
import { badRequest } from './errors';
import type { JsonObject } from './records';

function obj(v: unknown): JsonObject {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : {};
}

function content(name: string, input: JsonObject, declared: ReadonlySet<string>): JsonObject {
  if (!declared.has(name))
    throw badRequest(`Form input ${name} is used by an element but not declared by the form definition`);
  const raw = input[name];
  if (typeof raw !== 'string') throw badRequest(`Form input ${name} is missing: the form cannot be shown`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw badRequest(`Form input ${name} is not JSON`);
  }
  if (Array.isArray(parsed)) return { options: parsed };
  if (!parsed || typeof parsed !== 'object') throw badRequest(`Form input ${name} must be a JSON object or array`);
  return parsed as JsonObject;
}

/** The definition's elements as the instance shows them. */
export function renderFormElements(def: JsonObject, input: JsonObject): unknown[] {
  const declared = new Set((Array.isArray(def['formInput']) ? def['formInput'] : []).map((i) => String(obj(i)['id'])));
  const walk = (list: unknown[]): unknown[] =>
    list.map((raw) => {
      const el = obj(raw);
      const config = { ...obj(el['config']) };
      const ds = obj(config['dataSource']);
      if (ds['dataSourceType'] === 'FORM_INPUT') {
        const name = String(obj(ds['config'])['formInput'] ?? '');
        const { options, ...rest } = content(name, input, declared);
        delete config['dataSource'];
        Object.assign(config, rest);
        if (options !== undefined) {
          if (!Array.isArray(options)) throw badRequest(`Form input ${name}: options must be an array`);
          config['dataSource'] = { dataSourceType: 'STATIC', config: { options } };
        }
      }
      if (Array.isArray(config['formElements'])) config['formElements'] = walk(config['formElements'] as unknown[]);
      return { ...el, config };
    });
  return walk(Array.isArray(def['formElements']) ? (def['formElements'] as unknown[]) : []);
}
