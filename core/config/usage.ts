/** The --help text: every flag, its variable and its default. */
import { DEFAULT_MAX_FRAME } from "../wire/frame.ts";
import { DEFAULT_MGR_PORT } from "./config.ts";

/** Usage text printed by --help. */
export const USAGE = `Usage: deno task start [flags]

With no --role, starts a local cluster: one cellappmgr, two cellapps and one
baseapp, admin API on 127.0.0.1:8080.

Flags (each also read from the environment variable shown):
  --role=ROLE          cellappmgr (mgr), cellapp (cell) or baseapp (base)   SEAMLESS_ROLE
  --mgr=HOST:PORT      where the cellappmgr listens [127.0.0.1:${DEFAULT_MGR_PORT}]        SEAMLESS_MGR
  --host=HOST          address to bind [127.0.0.1]                          SEAMLESS_HOST
  --port=N             port for other processes, 0 = any free one           SEAMLESS_PORT
                       [cellappmgr and local cluster: ${DEFAULT_MGR_PORT}; others: 0]
  --admin-port=N       admin API port, 0 = any free one [8080]              SEAMLESS_ADMIN_PORT
  --kv=PATH|URL        Deno KV: file, KV Connect URL or :memory:            SEAMLESS_KV
                       [data/seamless.kv]
  --db=URL             PostgreSQL instead of Deno KV, shared by baseapps    SEAMLESS_DB
                       on many hosts: postgres://USER:PASSWORD@HOST:PORT/DB
  --secret=TEXT        cluster secret every process must share              SEAMLESS_SECRET
  --admin-token=TEXT   bearer token the admin API requires                  SEAMLESS_ADMIN_TOKEN
  --log-level=LEVEL    debug, info, warn or error [info]                    SEAMLESS_LOG_LEVEL
  --log-format=FORMAT  text, or json: one JSON object per line [text]       SEAMLESS_LOG_FORMAT
  --max-frame=BYTES    largest inter-process frame [${DEFAULT_MAX_FRAME}]            SEAMLESS_MAX_FRAME
  --cellapps=N         local cluster: cellapps to start [2]                 SEAMLESS_CELLAPPS
  --baseapps=N         local cluster: baseapps to start [1]                 SEAMLESS_BASEAPPS
  --npcs=N             NPCs spawned into the default space                  SEAMLESS_NPCS
                       [local cluster: 300; a lone cellappmgr: 0]
  --tick-hz=N          cell ticks per second [10]                           SEAMLESS_TICK_HZ
  --client-port=N      baseapp: WebSocket port for game clients, 0 = any    SEAMLESS_CLIENT_PORT
                       [local cluster: baseapp i takes N + i]
  --public-host=HOST   baseapp: host name in the client URL it announces     SEAMLESS_PUBLIC_HOST
                       [the bound address; for 0.0.0.0 or ::, the address
                       the cellappmgr sees]
  --auto-accounts=BOOL baseapp: create accounts on first login [true]       SEAMLESS_AUTO_ACCOUNTS
  --max-speed=M        baseapp: top speed of a client's entity, m/s [10]    SEAMLESS_MAX_SPEED
  --aoi-radius=M       cellapp: witnesses' AoI radius, m [500]               SEAMLESS_AOI_RADIUS
  --ghost-radius=M     cellapp: ghost radius, m [AoI radius + 15; no less]   SEAMLESS_GHOST_RADIUS
  --restore-timeout=MS cellapp: how long ghosts of a dead cellapp's         SEAMLESS_RESTORE_TIMEOUT
                       entities stay, frozen, awaiting a restore [5000]
  --balance-period=MS  cellappmgr: how often partitions follow the load;   SEAMLESS_BALANCE_PERIOD
                       0 keeps them still (a retire still drains) [1000]
  --min-cell-width=M   cellappmgr: narrowest a balanced cell is made, m;    SEAMLESS_MIN_CELL_WIDTH
                       cells may be narrower than the ghost radius [10]
  --busy-load=L        cellappmgr: a space gains a cell while its         SEAMLESS_BUSY_LOAD
                       cellapps' mean load is above L cores [0.8]
  --idle-load=L        cellappmgr: a cell balancing added retires while   SEAMLESS_IDLE_LOAD
                       the space's mean cell load is below L [0.2]
  --insecure           allow a non-loopback --host without --secret and     SEAMLESS_INSECURE
                       --admin-token
  --admin-origins=LIST admin API: browser origins allowed besides its own   SEAMLESS_ADMIN_ORIGINS
  --admin-hosts=LIST   admin API: Host names allowed besides loopback ones  SEAMLESS_ADMIN_HOSTS
                       and the bound address
  --spawn-limit=N      admin API: entities one spawn may create [10000]     SEAMLESS_SPAWN_LIMIT
  --entity-limit=N     admin API: entities the cluster may hold [100000]    SEAMLESS_ENTITY_LIMIT
  --abuse-limit=N      baseapp: bad-message score that disconnects [10]     SEAMLESS_ABUSE_LIMIT
  --move-rate=N        baseapp: moves/s a client is expected to send;       SEAMLESS_MOVE_RATE
                       twice that is dropped as abuse [the tick rate]
  --header-timeout=MS  admin and client ports: time to send a request head  SEAMLESS_HEADER_TIMEOUT
                       [10000]
  --client-sockets=K   baseapp: client sockets, epoll (Linux, IPv4; else    SEAMLESS_CLIENT_SOCKETS
                       Deno's) or deno [epoll]
  --login-rate=N       baseapp: login attempts per second from one address  SEAMLESS_LOGIN_RATE
                       (a burst of four times that) [5]
  --client-spawn       baseapp: a client may choose an existing space and   SEAMLESS_CLIENT_SPAWN
                       its position at login (tests, bots); without it the
                       server or the game's placement hook decides
  --autosave=S         baseapp: seconds between saves of a logged-in        SEAMLESS_AUTOSAVE
                       entity (also saved at logout) [10]
  --orphan-timeout=S   cellapp: seconds a cell entity whose baseapp died    SEAMLESS_ORPHAN_TIMEOUT
                       waits to be adopted before it is destroyed [60]
  --mgr-lease=MS       cellapp, baseapp: its cells or bases act only this   SEAMLESS_MGR_LEASE
                       long after the cellappmgr last answered, then hold
                       still; 0 = no lease, act on through an outage
                       (unsafe under a partition) [60% of the cellappmgr's
                       dead timeout]
  --game=PATH          the game module to run (exports a defineGame game)   SEAMLESS_GAME
                       [the sample game in entities/]
  --watch              local cluster: reload the game in every process      SEAMLESS_WATCH
                       when a file of its folder changes (development)
  --history=DIR        each process appends what it holds (reals, bases,    SEAMLESS_HISTORY
                       accounts) to DIR/<role>-<pid>.jsonl, for the
                       history checker (tools/history/) [off]
  --tls-cert=FILE      PEM certificate (chain): baseapp serves wss://,       SEAMLESS_TLS_CERT
                       cellappmgr serves its admin API over HTTPS
  --tls-key=FILE       PEM private key of --tls-cert                        SEAMLESS_TLS_KEY
  --tls-ca=FILE        PEM CA of every process's --tls-cert: process ports  SEAMLESS_TLS_CA
                       run over TLS, each peer checked against it
  --client-url=URL     baseapp: the URL clients are told, as is (behind a   SEAMLESS_CLIENT_URL
                       TLS-terminating proxy: wss://play.example.com/)
  --config=FILE        JSON file with any of the above (camelCase keys)     SEAMLESS_CONFIG
  --help               this text
`;
