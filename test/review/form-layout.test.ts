/**
 * #27 item 3: one form definition per layout, shared by the forms of that shape; the reviewer sees
 * exactly what a form of its own showed (the simulator renders the instance from the definition's
 * FORM_INPUT elements and the instance's inputs, and refuses an instance that does not fill them).
 */
import { buildFormContent, candidateDetails, rankCandidates } from '../../src/core/review/form-content';
import { splitForm } from '../../src/core/review/form-layout';
import { renderFormElements } from '../../src/simulator/form-render';
import { type Harness, candidates, pendingReview, submitAndSend, uid, useReviewSimulator } from './support';

describe('shared form layouts', () => {
  let h: Harness;
  useReviewSimulator((x) => (h = x));

  it('a rendered instance shows what a form of its own showed, element for element', async () => {
    const review = pendingReview({ candidates: h.withDetails(candidates(h.identityIds().slice(0, 4))) });
    const ranked = rankCandidates(review.candidates);
    const expected = buildFormContent(review, 'fs', 3, candidateDetails(ranked.slice(0, 3))).formElements;
    const split = splitForm(expected);
    // The skeleton holds no content of this account.
    expect(JSON.stringify(split.skeleton)).not.toContain('Ann Lee');
    expect(JSON.stringify(split.skeleton)).not.toContain(ranked[0]!.candidateId);
    const declared = { formInput: split.inputIds.map((id) => ({ id })), formElements: split.skeleton };
    expect(renderFormElements(declared, split.inputs)).toEqual(expected);

    const { queue } = h.queue(uid('fs'), { topK: 3 });
    await submitAndSend(queue, review);
    const inst = h.onlyInstance(review.accountId);
    expect(inst['formElements']).toEqual(expected);
    // The best candidate's name (from the baseline, no look-up) and its attribute values are shown.
    const shown = JSON.stringify(inst['formElements']);
    const best = h.sim.tenant.identities.get(ranked[0]!.candidateId)!;
    expect(shown).toContain(best.name);
    expect(shown).toContain(String(best.attributes['email']));
  });

  it('forms of one shape share one definition; another shape gets its own', async () => {
    const fs = uid('fs');
    const ids = h.identityIds();
    const same = [0, 1, 2].map(() => pendingReview({ candidates: h.withDetails(candidates(ids.slice(0, 2))) }));
    const other = pendingReview({ candidates: h.withDetails(candidates(ids.slice(0, 1))) });
    const defsBefore = h.sim.tenant.formDefinitions.size;
    await submitAndSend(h.queue(fs).queue, ...same, other);
    const defOf = (id: string): unknown => h.onlyInstance(id)['formDefinitionId'];
    expect(new Set(same.map((r) => defOf(r.accountId))).size).toBe(1);
    expect(defOf(other.accountId)).not.toBe(defOf(same[0]!.accountId));
    expect(h.sim.tenant.formDefinitions.size - defsBefore).toBe(2);
    // A later run reuses the layouts it finds.
    const later = pendingReview({ candidates: h.withDetails(candidates(ids.slice(2, 4))) });
    await submitAndSend(h.queue(fs).queue, later);
    expect(defOf(later.accountId)).toBe(defOf(same[0]!.accountId));
    expect(h.sim.tenant.formDefinitions.size - defsBefore).toBe(2);
  });

  it('the simulator refuses an instance whose inputs do not fill its definition', async () => {
    const split = splitForm(
      buildFormContent(pendingReview({ candidates: candidates(['x']) }), 'fs', 1, new Map()).formElements,
    );
    const def = await h.review.createFormDefinition({
      name: `Fusion Review - shared layout test ${uid()}`,
      ownerId: h.ownerId,
      formElements: split.skeleton,
      formInput: split.inputIds.map((id) => ({ id, type: 'STRING' })),
    });
    const create = (formInput: Record<string, unknown>): Promise<unknown> =>
      h.review.createFormInstance({
        formDefinitionId: def.id,
        recipientIds: [h.ownerId],
        expire: new Date(Date.now() + 86_400_000).toISOString(),
        formInput,
        createdBySourceId: 'fs',
      });
    const missing = { ...split.inputs };
    delete missing[split.inputIds[0]!];
    await expect(create(missing)).rejects.toMatchObject({ message: expect.stringContaining('is missing') });
    await expect(create({ ...split.inputs, [split.inputIds[0]!]: 'not json' })).rejects.toMatchObject({
      message: expect.stringContaining('is not JSON'),
    });
    await expect(create(split.inputs)).resolves.toBeDefined();
  });
});
