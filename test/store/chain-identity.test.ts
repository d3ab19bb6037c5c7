import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ensureChainIdentity, StoreChainIdentityError } from '../../store/chain-identity.js';
import { openStore } from '../../store/store.js';
import { tempDir } from './helpers/temp-dir.js';

const GENESIS = `0x${'11'.repeat(32)}`;

test('a generator setting the store never recorded is named as new since an earlier version made the store', async (t) => {
  const store = openStore({ dataDir: tempDir(t) });
  t.after(() => store.close());
  ensureChainIdentity(store, { genesisHash: GENESIS, generator: { seed: 'a' } });
  ensureChainIdentity(store, { genesisHash: GENESIS, generator: { seed: 'a' } });
  assert.throws(() => ensureChainIdentity(store, { genesisHash: GENESIS, generator: { seed: 'a', genesisState: 'alloc-v1' } }), (error: unknown) => {
    assert.ok(error instanceof StoreChainIdentityError, String(error));
    assert.match(error.message, /genesisState = alloc-v1 is new since an earlier version made the store/);
    return true;
  });
  assert.throws(() => ensureChainIdentity(store, { genesisHash: GENESIS, generator: { seed: 'b' } }), /seed was a, is now b/);
});
