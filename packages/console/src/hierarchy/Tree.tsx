/**
 * The hierarchy as a tree whose levels are fetched as they are opened, a page at a time (100 folders, then "Show
 * more"): a group of ten thousand folders opens as fast as one of ten. Each row is a disclosure button (its
 * `aria-expanded` says whether it is open) and a link to the group's page, so the tree is walked with Tab and Enter.
 */
import type { Group } from "@arbor/core/Group"
import { useState } from "preact/hooks"
import * as Client from "../Client.js"
import { useConnection } from "../Connection.js"
import * as Route from "../Route.js"
import { ErrorMessage, ShowMore } from "../ui/components.js"
import { usePages } from "../ui/hooks.js"

/** How many groups a level shows before "Show more". */
export const pageSize = 100

/** One level: the groups `where` selects, page by page; `empty` says when there are none ("No folders"). */
export const Level = (props: {
  readonly where: { readonly childrenOf: string } | { readonly inRoot: true }
  readonly label: string
  readonly empty?: string
}) => {
  const { client } = useConnection()
  const groups = usePages(
    (pageToken) =>
      Client.run(client.groups.list({ urlParams: { ...props.where, pageSize, orderBy: "name", pageToken } })).then(
        (page) => ({ items: page.groups, next: page.nextPageToken })
      ),
    []
  )
  return (
    <ul class="tree" aria-label={props.label} aria-busy={groups.loading}>
      {groups.items.map((group) => <Node key={group.uid} group={group} />)}
      {groups.loading ? <li class="muted">Loading…</li> : null}
      {groups.error === undefined ? null : (
        <li>
          <ErrorMessage error={groups.error} />
        </li>
      )}
      {!groups.loading && groups.error === undefined && groups.items.length === 0
        ? <li class="muted">{props.empty ?? "No folders"}</li>
        : null}
      {groups.more === undefined ? null : (
        <li>
          <ShowMore more={groups.more} />
        </li>
      )}
    </ul>
  )
}

const Node = ({ group }: { readonly group: Group }) => {
  const [open, setOpen] = useState(false)
  return (
    <li>
      <div class="node">
        <button
          type="button"
          class="toggle"
          aria-expanded={open}
          aria-label={`${open ? "Close" : "Open"} ${group.name}`}
          onClick={() => setOpen(!open)}
        >
          {open ? "▾" : "▸"}
        </button>
        <a href={Route.href(Route.group(group.uid))}>{group.name}</a>
      </div>
      {open ? <Level where={{ childrenOf: group.uid }} label={`Folders of ${group.name}`} /> : null}
    </li>
  )
}
