/** The home view: the organizations the signed-in person can see, as the roots of the tree. */
import { Level } from "./Tree.js"

export const Hierarchy = () => (
  <section>
    <h1>Hierarchy</h1>
    <p class="muted">Organizations and their folders. Open a row to see its folders; follow a name to manage it.</p>
    <Level where={{ inRoot: true }} label="Organizations" />
  </section>
)
