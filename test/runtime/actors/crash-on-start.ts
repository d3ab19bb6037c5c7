/** Test actor that fails during init every time: a crash loop for escalation tests. Accepts nothing. */
import { defineActor } from '../../../runtime/actor.js';

export default defineActor<null>({
  init() {
    throw new Error('cannot start: the upstream refused on purpose');
  },
  handle() {
    return undefined;
  },
});
