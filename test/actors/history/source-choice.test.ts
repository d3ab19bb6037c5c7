/**
 * The history lane's choice of source (actors/history/source-choice.ts): a request naming a source the node skipped
 * gets 422 with the reason, an unknown one 404, and with no source to default to the answer says whether none is
 * configured or every one is skipped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CodedError } from '../../../runtime/errors.js';
import { chosenSource, missingSourceError, type SourceChoice } from '../../../actors/history/source-choice.js';

const SKIPPED = { id: 'devnet', reason: 'kind "devnet" serves the embedded devnet\'s chain, and sources.live.kind is "rpc"' };

function refusal(lane: SourceChoice, requested: string | undefined): CodedError {
  try {
    chosenSource(lane, requested, 'a materialization job needs one', { rule: 'r' });
  } catch (error) {
    assert.ok(error instanceof CodedError, String(error));
    return error;
  }
  assert.fail(`expected ${String(requested)} to be refused`);
}

test('a request uses the source it names, else the first one the node uses', () => {
  const lane: SourceChoice = { sources: new Map([['archive', {}], ['other', {}]]), defaultSource: 'archive', skippedSources: [SKIPPED] };
  assert.equal(chosenSource(lane, undefined, 'x'), 'archive');
  assert.equal(chosenSource(lane, 'other', 'x'), 'other');
});

test('a skipped source answers 422 with why it is skipped; an unknown one 404', () => {
  const lane: SourceChoice = { sources: new Map([['archive', {}]]), defaultSource: 'archive', skippedSources: [SKIPPED] };
  const skipped = refusal(lane, 'devnet');
  assert.equal(skipped.code, 'unsupported_capability');
  assert.equal(skipped.message, `history source 'devnet' is skipped: ${SKIPPED.reason}`);
  assert.deepEqual(skipped.details, { source: 'devnet', rule: 'history_source_skipped' });
  const unknown = refusal(lane, 'nope');
  assert.equal(unknown.code, 'not_found');
  assert.equal(unknown.message, "no history source 'nope'");
  assert.deepEqual(missingSourceError('devnet', []).code, 'not_found', 'a source is skipped only when the node says so');
});

test('with no source to default to, the 422 says whether none is configured or each is skipped, and what needs one', () => {
  const allSkipped = refusal({ sources: new Map(), defaultSource: undefined, skippedSources: [SKIPPED] }, undefined);
  assert.equal(allSkipped.code, 'unsupported_capability');
  assert.equal(allSkipped.message, `no history source is usable ('devnet' is skipped: ${SKIPPED.reason}); a materialization job needs one`);
  assert.deepEqual(allSkipped.details, { rule: 'r' });
  const none = refusal({ sources: new Map(), defaultSource: undefined, skippedSources: [] }, undefined);
  assert.equal(none.message, 'no history source is configured ([[sources.history]]); a materialization job needs one');
});
