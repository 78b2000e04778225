/** The console's entry: the session (a sign-in's return, or the tab's), then the app. */
import { render } from "preact"
import { App } from "./App.js"
import * as Session from "./Session.js"

render(<App initial={Session.initial()} />, document.getElementById("console")!)
