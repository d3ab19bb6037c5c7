/** Test actor that starts but never reports ready (a hung initialisation, for the start watchdog). Accepts nothing. */
import { defineActor } from '../../../runtime/actor.js';

export default defineActor<null>({
  init() {
    return null;
  },
  handle() {
    return undefined;
  },
});
