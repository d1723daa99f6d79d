/**
 * Who reviews an account of a source: the identities holding the access profile named exactly
 * "<source name> Reviewer" (case-sensitive), plus the owner of the connector's source for every
 * form when "Owner is global reviewer?" is on. Deduplicated by identity id.
 */
import type { CallOptions, PlatformIdentity, PlatformPort } from '../ports/platform';
import type { ReviewPlatformPort } from '../ports/review-platform';
import type { Reviewer, ReviewerResolution } from './types';

const REVIEWER_SUFFIX = ' Reviewer';

export function reviewerProfileName(sourceName: string): string {
  return `${sourceName}${REVIEWER_SUFFIX}`;
}

function emailOf(attributes: Record<string, unknown>): string | undefined {
  for (const key of ['email', 'mail', 'emailAddress']) {
    const v = attributes[key];
    const one = Array.isArray(v) ? v[0] : v;
    if (typeof one === 'string' && one.includes('@')) return one;
  }
  return undefined;
}

export interface ReviewerQuery {
  /** The account's source (exact name). */
  sourceName: string;
  /** Owner of the connector's own source. */
  owner?: { id: string; name: string };
  ownerIsGlobalReviewer: boolean;
}

export interface ReviewerPorts {
  review: Pick<ReviewPlatformPort, 'findAccessProfileByName' | 'identitiesWithAccessProfile'>;
  platform: Pick<PlatformPort, 'getIdentity'>;
}

export async function resolveReviewers(
  ports: ReviewerPorts,
  query: ReviewerQuery,
  opts?: CallOptions,
): Promise<ReviewerResolution> {
  const byId = new Map<string, Reviewer>();
  const problems: string[] = [];
  const add = (identity: PlatformIdentity, via: Reviewer['via'][number]): void => {
    const known = byId.get(identity.id);
    if (known) {
      if (!known.via.includes(via)) known.via.push(via);
      return;
    }
    const email = emailOf(identity.attributes);
    byId.set(identity.id, {
      id: identity.id,
      name: identity.name || identity.id,
      ...(email ? { email } : {}),
      via: [via],
    });
  };

  const profileName = reviewerProfileName(query.sourceName);
  const profile = await ports.review.findAccessProfileByName(profileName, opts);
  if (!profile) {
    problems.push(`the access profile "${profileName}" does not exist`);
  } else {
    let holders = 0;
    for await (const identity of ports.review.identitiesWithAccessProfile(profile.id, opts)) {
      holders++;
      add(identity, 'access-profile');
    }
    if (holders === 0) problems.push(`the access profile "${profileName}" is assigned to nobody`);
  }

  if (!query.ownerIsGlobalReviewer) {
    if (byId.size === 0) problems.push('"Owner is global reviewer?" is off');
  } else if (!query.owner) {
    problems.push('"Owner is global reviewer?" is on but the connector\'s source has no owner');
  } else {
    const identity = await ports.platform.getIdentity(query.owner.id, opts);
    if (identity) add(identity, 'owner');
    else problems.push(`the source owner ${query.owner.name} (${query.owner.id}) was not found as an identity`);
  }
  return { reviewers: [...byId.values()], problems };
}
