/*
 * Fencing tokens on a Redlock quorum: the design of docs/fencing.md as
 * shipped, for spin.  One model; the variants are -D switches (see
 * docs/models/README.md and scripts/models.sh).
 *
 * What is modelled
 *  - N nodes (3 or 5), CLIENTS clients making ACQS fenced acquires each, of
 *    one resource.  A node's fencing state is valid[n] and cnt[n], the
 *    resource's effective counter max(c:<key>, floor) (with one resource,
 *    `max` of the hash is the same number).
 *  - Lock keys are abstracted away: a vote on a valid node may be granted
 *    or refused arbitrarily (key held, key expired during a pause, clock
 *    jump...).  Mutual exclusion plays no part in P.
 *  - Each request is one atomic script run.  A vote's run and its reply are
 *    one step; a reply may be lost (the node ran the script, the client
 *    counts it failed).  A request may never run, or run late: late runs
 *    of votes are the PUMPS (others' attempts, lost replies, retries: each
 *    only increments a valid node's counter), late write-backs run from
 *    each client's `late` loop after its acquire ended, with its own T.
 *  - A client may give up at any point (timeout, validity gone).
 *  - Crashes: LOSSES restarts that lose counters (to 0 or any older value:
 *    no persistence, an old snapshot, FLUSHALL, eviction), RESTARTS
 *    restarts that keep them (AOF always: the run id still changes, so the
 *    state is no longer valid).  Assumption F is enforced: at most
 *    N - MAJ nodes have lost counters and not been re-seeded at a time.
 *  - Quarantine: a node whose state is not valid answers "lost" to votes
 *    and refuses write-backs.
 *  - The wait: re-seeding of node n starts only after every acquire that
 *    was in flight at n's latest loss has ended (atloss[n]).  The design
 *    starts the wait later (when a client first sees the loss id), so the
 *    model allows more than the design does.  A later loss of n restarts
 *    the wait (the seed script checks the loss id), unless n was already
 *    not valid and kept its `lost` field (a persisted restart): then the
 *    pending wait goes on, as in the design.
 *  - Re-seed: reads every other node one at a time (any interleaving),
 *    then seeds n with max(own, max over the valid ones read) once at least
 *    OMAJ = N/2 + 1 others answered valid.  BOOT: bootstrap rule (all N-1
 *    others answered and none has a counter above 0: seed floor 0), with
 *    every node starting with no fencing state.
 *
 * Property P (assert, ghost variables): if acquire A completed before
 * acquire B began, fence(A) < fence(B).  maxDone is the largest fence of
 * any completed acquire; an acquire notes it when it begins (below) and
 * asserts its own fence is larger when it completes.
 *
 * Variant switches (defaults = the shipped design):
 *  WRITEBACK=0   no write-back: complete on the quorum's max.
 *  QUARANTINE=0  a node that lost its counters stays valid (no quarantine,
 *                no re-seed).
 *  WAIT=0        re-seed without the wait.
 *  BOOTWAIT=0    with BOOT: the bootstrap rule applies without the wait.
 *  OMAJ=1        re-seed from one valid other node instead of N/2+1.
 */

#ifndef N
#define N 3
#endif
#define MAJ (N / 2 + 1)
#ifndef OMAJ
#define OMAJ (N / 2 + 1)
#endif
#ifndef CLIENTS
#define CLIENTS 2
#endif
#ifndef ACQS
#define ACQS 1
#endif
#ifndef PUMPS
#define PUMPS 2
#endif
#ifndef LOSSES
#define LOSSES 1
#endif
#ifndef RESTARTS
#define RESTARTS 0
#endif
#ifndef WRITEBACK
#define WRITEBACK 1
#endif
#ifndef QUARANTINE
#define QUARANTINE 1
#endif
#ifndef WAIT
#define WAIT 1
#endif
#ifndef BOOT
#define BOOT 0
#endif
#ifndef BOOTWAIT
#define BOOTWAIT 1
#endif

#define BIT(n) (1 << (n))
#define ALLNODES (BIT(N) - 1)
#define OTHERS(n) (ALLNODES & ~BIT(n))

byte cnt[N];      /* effective counter of the resource on each node */
bit valid[N];     /* `run` present: the node's state is valid */
bit lostf[N];     /* ghost: counters lost and not re-seeded (for F) */
byte nlost;       /* ghost: number of lostf set */
byte atloss[N];   /* acquires (client bits) in flight at n's latest loss, not ended yet */
byte rs[N];       /* recovery of n: 0 waiting (or idle when valid), 1 reading */
byte rread[N];    /* others read in this round */
byte rvalid[N];   /* how many of them answered valid */
byte rmax[N];     /* largest max among the valid answers */
bit rnz[N];       /* some answer (valid or not) had a counter above 0 */
byte inprog;      /* acquires in flight, one bit per client */
byte maxDone;     /* ghost: largest fence of a completed acquire */
byte pumps, losses, restarts;

/* A node's state stops being valid (restart, loss).  keep: its `lost`
   field survived, so a pending wait and reads go on. */
inline invalidate(n) {
  if
  :: !valid[n] && QUARANTINE -> skip   /* kept `lost`: the pending wait goes on */
  :: true ->                           /* a new loss id: a new wait */
     atloss[n] = inprog;
     rs[n] = (WAIT == 0 -> 1 : 0); rread[n] = 0; rvalid[n] = 0; rmax[n] = 0; rnz[n] = 0
  fi;
  valid[n] = (QUARANTINE == 0)
}

/* Crash with loss of counters: back to any older value (0 .. cnt). */
#define LOSE(n) \
  :: atomic { losses < LOSSES && (lostf[n] || nlost < N - MAJ) -> \
       losses++; \
       do :: cnt[n] > 0 -> cnt[n]--  :: break od; \
       if :: !lostf[n] -> lostf[n] = 1; nlost++ :: else -> skip fi; \
       invalidate(n) }

/* Restart that keeps the counters (AOF always): the run id changes. */
#define RESTART(n) \
  :: atomic { restarts < RESTARTS -> restarts++; invalidate(n) }

/* Late vote runs, lost replies, other clients' attempts. */
#define PUMP(n) :: atomic { pumps < PUMPS && valid[n] -> pumps++; cnt[n]++ }

/* The wait is over: every acquire in flight at the loss has ended. */
#define WAITED(n) :: atomic { !valid[n] && rs[n] == 0 && atloss[n] == 0 -> rs[n] = 1 }

/* Re-seeding client reads node o's state for node n. */
#define READ(n, o) \
  :: atomic { rs[n] == 1 && !(rread[n] & BIT(o)) && (!SYMM || (rread[n] & (BIT(o) - 1) & ~BIT(n)) == ((BIT(o) - 1) & ~BIT(n))) -> rread[n] = rread[n] | BIT(o); \
       if \
       :: valid[o] -> rvalid[n]++; if :: cnt[o] > rmax[n] -> rmax[n] = cnt[o] :: else -> skip fi \
       :: else -> if :: ALLRULE && cnt[o] > rmax[n] -> rmax[n] = cnt[o] :: else -> skip fi \
       fi; \
       if :: cnt[o] > 0 -> rnz[n] = 1 :: else -> skip fi }

#define BOOTRULE(n) ((BOOT && rread[n] == OTHERS(n) && !rnz[n]) || ALLANSWERED(n))
/* ALLRULE=1 (as shipped): once every other node answered, valid or not,
   seed with the largest counter among them all. */
#define ALLANSWERED(n) (ALLRULE && rread[n] == OTHERS(n))

/* The seed script (runs only if n's loss id is still the one waited out:
   a new loss resets rs[n] in invalidate). */
#define SEED(n) \
  :: atomic { rs[n] == 1 && (rvalid[n] >= OMAJ || BOOTRULE(n)) -> \
       if :: rmax[n] > cnt[n] -> cnt[n] = rmax[n] :: else -> skip fi; \
       valid[n] = 1; \
       if :: lostf[n] -> lostf[n] = 0; nlost-- :: else -> skip fi; \
       rs[n] = 0; rread[n] = 0; rvalid[n] = 0; rmax[n] = 0; rnz[n] = 0 }

/* Not enough valid answers: read again. */
#define REREAD(n) \
  :: atomic { rs[n] == 1 && rread[n] == OTHERS(n) && rvalid[n] < OMAJ && !BOOTRULE(n) -> \
       rread[n] = 0; rvalid[n] = 0; rmax[n] = 0; rnz[n] = 0 }

/* BOOTWAIT=0: the bootstrap rule applied at once, without the wait
   (all N-1 others read at one moment). */
#define BOOTNOW(n) \
  :: atomic { !valid[n] && rs[n] == 0 && ALLZERO(n) -> \
       valid[n] = 1; if :: lostf[n] -> lostf[n] = 0; nlost-- :: else -> skip fi; \
       rread[n] = 0; rvalid[n] = 0; rmax[n] = 0; rnz[n] = 0 }

#if N == 3
#define ALLZERO(n) (cnt[(n + 1) % 3] == 0 && cnt[(n + 2) % 3] == 0)
#else
#define ALLZERO(n) (cnt[(n + 1) % 5] == 0 && cnt[(n + 2) % 5] == 0 && cnt[(n + 3) % 5] == 0 && cnt[(n + 4) % 5] == 0)
#endif

/* SYMM=1 (the default with one crash): the crash hits node 0 and the
   re-seeding reads node 1 before node 2.  Nodes are interchangeable, so
   by symmetry this loses no behaviour when only one node ever crashes
   (LOSSES + RESTARTS <= 1); SYMM=0 lets any node crash, reads in any order. */
#ifndef ALLRULE
#define ALLRULE 1
#endif

#ifndef SYMM
#if LOSSES + RESTARTS <= 1
#define SYMM 1
#else
#define SYMM 0
#endif
#endif

#if SYMM
#define NODE_ENV(n) PUMP(n)
#else
#define NODE_ENV(n) PUMP(n) LOSE(n) RESTART(n)
#endif

#if QUARANTINE
#if BOOT && !BOOTWAIT
#define NODE_REC(n) WAITED(n) SEED(n) REREAD(n) BOOTNOW(n)
#else
#define NODE_REC(n) WAITED(n) SEED(n) REREAD(n)
#endif
#else
#define NODE_REC(n)
#endif

active proctype Environment() {
  byte i;
#if BOOT
  /* No node has ever had fencing state: every node waits (nothing in
     flight) and is seeded by the bootstrap rule or the majority rule. */
  atomic { i = 0; do :: i < N -> valid[i] = 0; i++ :: else -> break od; i = 0 }
#else
  atomic { i = 0; do :: i < N -> valid[i] = 1; i++ :: else -> break od; i = 0 }
#endif
end:
  do
  NODE_ENV(0) NODE_ENV(1) NODE_ENV(2)
#if SYMM
  LOSE(0) RESTART(0)
#endif
#if N == 5
  NODE_ENV(3) NODE_ENV(4)
#endif
#if QUARANTINE
  NODE_REC(0) NODE_REC(1) NODE_REC(2)
  READ(0, 1) READ(0, 2) READ(1, 0) READ(1, 2) READ(2, 0) READ(2, 1)
#if N == 5
  NODE_REC(3) NODE_REC(4)
  READ(0, 3) READ(0, 4) READ(1, 3) READ(1, 4) READ(2, 3) READ(2, 4)
  READ(3, 0) READ(3, 1) READ(3, 2) READ(3, 4)
  READ(4, 0) READ(4, 1) READ(4, 2) READ(4, 3)
#endif
#endif
  od
}

/* Vote on node n: the fenced acquire script and its reply, one step.  A
   refused vote (lock key held), a vote that never runs, or one whose reply
   is lost, is the client not taking this step (a late or unanswered run is
   a PUMP). */
#define VOTE(n) \
  :: atomic { !(sent & BIT(n)) -> sent = sent | BIT(n); \
       if \
       :: valid[n] -> cnt[n]++; oks++; \
          if :: cnt[n] > T -> T = cnt[n] :: else -> skip fi; \
          if :: mn == 0 || cnt[n] < mn -> mn = cnt[n] :: else -> skip fi \
       :: else -> skip      /* "state lost": failed */ \
       fi }

/* Write-back counter = max(counter, T) on node n and its ack, one step;
   refused if not valid.  One that runs but whose ack is lost is a LATEWB. */
#define WB(n) \
  :: atomic { !(sent & BIT(n)) -> sent = sent | BIT(n); \
       if \
       :: valid[n] -> if :: cnt[n] < T -> cnt[n] = T :: else -> skip fi; acks++ \
       :: else -> skip \
       fi }

/* A write-back still in the network runs after the acquire ended. */
#define LATEWB(n) \
  :: atomic { wb && !(sent & BIT(n)) -> sent = sent | BIT(n); \
       if :: valid[n] && cnt[n] < T -> cnt[n] = T :: else -> skip fi }

inline ended() {
  inprog = inprog & ~BIT(id);
  i = 0;
  do :: i < N -> atloss[i] = atloss[i] & ~BIT(id); i++ :: else -> break od;
  i = 0
}

proctype Client(byte id) {
  byte T, floor, oks, mn, sent, acks, i, done;
  bit wb;
again:
  atomic { floor = maxDone; inprog = inprog | BIT(id) }
  do
  :: oks >= MAJ -> break
  VOTE(0) VOTE(1) VOTE(2)
#if N == 5
  VOTE(3) VOTE(4)
#endif
  :: atomic { ended(); goto late }   /* gave up */
  od;
  atomic {
    sent = 0; oks = 0;
#if WRITEBACK
    if
    :: mn == T -> skip   /* fast path: the replies agree */
    :: else -> wb = 1
    fi
#endif
  }
  if
  :: wb ->
     do
     :: acks >= MAJ -> break
     WB(0) WB(1) WB(2)
#if N == 5
     WB(3) WB(4)
#endif
     :: atomic { ended(); goto late }   /* gave up: undone, no fence */
     od
  :: else -> skip
  fi;
  atomic {
    assert(T > floor);
    if :: T > maxDone -> maxDone = T :: else -> skip fi;
    ended()
  }
late:
  do
  LATEWB(0) LATEWB(1) LATEWB(2)
#if N == 5
  LATEWB(3) LATEWB(4)
#endif
  :: break
  od;
  atomic {
    T = 0; floor = 0; oks = 0; mn = 0; sent = 0; acks = 0; wb = 0;
    done++;
    if :: done < ACQS -> goto again :: else -> skip fi
  }
}

init {
  byte c;
  atomic {
    do
    :: c < CLIENTS -> run Client(c); c++
    :: else -> break
    od;
    c = 0
  }
}
