import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fromPlatformForm } from '../../src/connector/platform-form';
import { parseFusionConfig } from '../../src/core/config/fusion-config';
import { parseMatchingSection } from '../../src/core/config/matching-section';
import { compileTemplate } from '../../src/core/templates/velocity-template';

/** docs/configuration.md's complete example stays valid and complete. */
const root = path.join(__dirname, '..', '..');
const exampleText = readFileSync(path.join(root, 'docs', 'examples', 'connector-config.json'), 'utf8');
const example = JSON.parse(exampleText) as Record<string, unknown>;

interface SpecField {
  key: string;
  type: string;
}

/** Every form field of connector-spec.json, with the card list it belongs to ('' at the top). */
function specFields(): { card: string; key: string }[] {
  const spec = JSON.parse(readFileSync(path.join(root, 'connector-spec.json'), 'utf8')) as { sourceConfig: unknown };
  const out: { card: string; key: string }[] = [];
  const walk = (node: unknown, card: string): void => {
    if (Array.isArray(node)) return node.forEach((n) => walk(n, card));
    if (!node || typeof node !== 'object') return;
    const field = node as Partial<SpecField> & Record<string, unknown>;
    if (typeof field.key === 'string' && typeof field.type === 'string') {
      out.push({ card, key: field.key });
      if (field.type === 'cardList') {
        for (const [k, v] of Object.entries(field)) if (k !== 'key' && k !== 'type') walk(v, field.key);
        return;
      }
    }
    for (const v of Object.values(field)) walk(v, card);
  };
  walk(spec.sourceConfig, '');
  return out;
}

describe('the complete configuration example (docs/configuration.md)', () => {
  it('is accepted by the connector as it is, and again after the platform-form conversion', () => {
    expect(() => parseFusionConfig(example)).not.toThrow();
    expect(fromPlatformForm(example)).toEqual(example);
    const matching = parseMatchingSection(example);
    expect(matching.attributes.map((a) => a.attribute)).toEqual(['displayName', 'email', 'lastName']);
  });

  it('every template compiles', () => {
    const defs = example['attributeDefinitions'] as { name: string; expression: string; type: string }[];
    for (const d of defs.filter((x) => x.type !== 'uuid')) expect(() => compileTemplate(d.expression)).not.toThrow();
  });

  it('holds every setting of the platform form (matching and per-source options in the core shape)', () => {
    // The form's card lists and their fields map onto these places in the core's shape.
    const places: Record<string, (key: string) => boolean> = {
      '': (k) => k in example,
      sourceOptions: (k) =>
        k === 'source' ||
        Object.values(example['sourceOptions'] as Record<string, object>).some((o) => k in o),
      attributeMaps: (k) => (example['attributeMaps'] as object[]).some((m) => k in m),
      attributeDefinitions: (k) => (example['attributeDefinitions'] as object[]).some((d) => k in d),
      matchingAttributes: (k) =>
        ((example['matching'] as { attributes: object[] }).attributes ?? []).some((a) => k in a),
    };
    const formOnly: Record<string, string> = {
      matchingAttributes: 'matching',
      matchingReviewTopK: 'matching',
      matchingModel: 'matching',
      matchingProbabilityThreshold: 'matching',
      matchingMaxReviewShare: 'matching',
    };
    const missing = specFields().filter(({ card, key }) => {
      if (card === '' && formOnly[key]) return !(formOnly[key] in example);
      const has = places[card];
      if (!has) throw new Error(`the test does not know the card list ${card}`);
      return !has(key);
    });
    expect(missing).toEqual([]);
  });

  it('the page shows the file as it is', () => {
    const page = readFileSync(path.join(root, 'docs', 'configuration.md'), 'utf8');
    expect(page).toContain(`\`\`\`json\n${exampleText.trimEnd()}\n\`\`\``);
  });
});
