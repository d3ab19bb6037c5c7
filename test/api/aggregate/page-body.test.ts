import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PageBytes, pageWithFields } from '../../../api/aggregate/entities/page-body.js';

test('a page written part by part is the JSON of its rows and fields, across buffer growth and multi-byte text', () => {
  const rows = Array.from({ length: 300 }, (_, i) => ({ i, text: `é€😀 ${'x'.repeat(i * 3)}`, nested: { even: i % 2 === 0 } }));
  const page = new PageBytes();
  for (const row of rows) {
    const json = JSON.stringify(row);
    // Head as a string, the middle as bytes, the tail as a string, as the entity route writes them.
    page.addRow(json.slice(0, 5), Buffer.from(json.slice(5, -1), 'utf8'), json.slice(-1));
  }
  const bytes = page.finish({ nextCursor: null, boundary: { sequence: '7' } });
  assert.ok(bytes.length > 1 << 16, 'the page outgrew the initial buffer');
  assert.deepEqual(JSON.parse(bytes.toString('utf8')), { data: rows, nextCursor: null, boundary: { sequence: '7' } });
});

test('pageWithFields of no rows is an empty data array with the fields', () => {
  assert.equal(pageWithFields([], { nextCursor: null }).toString('utf8'), '{"data":[],"nextCursor":null}');
});
