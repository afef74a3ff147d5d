"""A resumable soak: random legal games of every game over a grid of its rule options, each hand
held to the rules (RULES.md §1 and each game's section) by checks written here again, independently
of ``whist_env.rules``: each game's by its referee, a module of its own (``referees/<game>.py``).

Soak game number ``seed`` is game ``GAMES[seed mod G]`` (G: the games soaked, every registered game
by default), its ``ordinal = seed div G``-th game; it plays ``raw_env(**options)`` reset with
``seed``, every action drawn uniformly from the action mask. Its options come from the game's
option grid (:func:`option_grid`: derived from the options dataclass, bools both ways, every value
of a ``one_of``, an option's own ``samples`` or :data:`SMALL_VALUES` for ints and custom checks,
targets kept small so that games stay short), drawn with the ordinal (:func:`draw_options`) so that every value of every
option is played once in each run of as many consecutive games of a kind as it has values.

Checked at every hand (a failure records what and where, and ends that game only):

* the deal (RULES.md §1.3 and each game's "Dealing"): the hands, with the kitty / stock / turn-up /
  dead card / undealt cards read from ``state()``'s hidden piles, partition the game's deck, each
  hand of the due size; the deal passes to the left (the same dealer after a revoke, §2.9);
* every trick (§1.4, §6.3, §7.1): one card per player in turn from its leader, each card played once
  and only by a player who held it, the leader the first leader due (§2.4, §3.4, §4.3, §5.6, §6.7,
  §7.3) or the last winner, and the winner the one RULES.md's ranking gives, from the trump (the
  turn-up §2.3, the rotation, the first stock card §4.2, §5.4's turned card, the declaration §6.6);
* the tricks taken sum to the hand's length, and equal the ``"trick"`` events counted;
* the hand's points and score change, from the tricks counted from the events and the bids or
  contract, by each game's formula written here (§2.5, §2.9, §3.5, §4.5, §5.7, §6.8, §7.4), and
  the rewards of that step (§1.9); no reward on other steps;
* the mask of the player to act is never empty;
* once per hand, at a decision drawn at random: the mask equals the legal set written here (§1.4
  follow suit and must trump, §2.9 revoke mode, §3.3, §5.5 the hook rule, §6.5 the auction, §6.6);
  every other agent's mask is empty; ``state()`` begins with the acting agent's observation and its
  ``hands`` block holds each agent's ``hand`` block of its own observation (and its
  ``information_state`` hand); hands, played cards and hidden piles still partition the deck;
  ``env.clone()`` and a pickle round trip equal the env (every agent's observation and information
  state, ``state()``, rewards, infos), and still do after all three take the same action.

A sample of the games (every ``--vector-every``-th ordinal of each game) is also played on the
batched engine: ``--batch`` games with its options and seed (``whist_env.vector.make(game, batch,
...)``) beside as many ``raw_env`` on the engine's own deals, as the tests' differential harness
does: the seat to act, masks, observations, ``state()``, rewards, episode ends, hand points, scores
and winners must be equal at every step.

At the episode's end (§1.9): terminated with ``winners`` or truncated, truncation after exactly
``max_hands`` hands, one scored hand per ``episode="hand"`` episode.

What the events do not hold is read elsewhere: honours (§2.5) need the hands as dealt, read from
``current_deal()`` (as the turn-up, the stock order of §4.3 and the kitty); Minnesota's face-down
bid cards (§3.3), the Bid Whist calls and declaration (§6.5, §6.6), Romanian bids and Spades bids
(§8.3) are read from the soak's own actions. Not checked by a rule written here: who wins a game or
a match (§2.6, §3.6, §4.5, §5.8, §6.10, §7.4, §8.6; only through the ``win_loss`` rewards, which follow the env's
``winners``, and against the batched engine); the dealer drawn at random without ``first_dealer``
(only its rotation); a Bid Whist trick of four suitless, powerless cards (RULES.md is silent; the
leader keeps it, as the rules module has it). Random play in revoke mode (§2.9) revokes in most
hands, so those hands are mostly annulled ones.

Work is split by seed range into chunks; each finished chunk's result is written atomically to
``DIR/chunk_<first seed>.json`` and a rerun skips finished chunks (``DIR/soak.json`` pins the
settings that decide what a chunk plays). Progress goes to stdout with games/s and the ETA; at the
end, games/s, games per game, option coverage (games per option value) and every failure with its
game, options and seed, and the command that replays it.

    python benchmarks/soak.py --games 1000000 --out soak-run --workers 8     # resumable
    python benchmarks/soak.py --games 5000 --out /tmp/soak --workers 1
    python benchmarks/soak.py --replay classic_whist 1234                    # one game again
"""
