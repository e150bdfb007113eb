"""What the demo vault says: users, conversation threads, memory notes and other notes, as data.

`companion.demo.build` turns these tables into files. Conversations are written in a small line format,
parsed once at import, so the text reads like text and stays under the line-length limit:

    @ <days ago> [<chat id>] | <title>     starts a session; the chat defaults to the thread's
    = <summary>                              what the session summary body says
    U <text>                                 a user turn
    S <text>                                 a sentinel turn
      <text>                                 (two leading spaces) continues the line above

Facts are specific on purpose (names, numbers, dates, places) and recur across sessions, so recall
can be asked about them: the ski trip goes to Chamonix on 14 February with a budget of 1,800 EUR
per person, the kitchen budget ends at 18,500 EUR, the half marathon is run in 1:54:12, and so on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

AGENT = "sentinel"
"""The agent's speaker name in conversation notes."""

DANGLING_LINK = "Sea of Tranquility"
"""The one link of the demo vault that points at no note, on purpose (a book not read yet)."""

USERS: dict[str, str] = {"alice": "Alice Martin", "bob": "Bob Keller", "carol": "Carol Nguyen"}
"""User id to the title of the user's person note."""


@dataclass(frozen=True)
class Stage:
    """One session of a thread: what was said and when."""

    title: str
    """Title of the conversation note (without the date prefix)."""
    days_ago: float
    """How long before `now` the session took place; under 2 places it inside the hot window."""
    chat: str | None
    """The chat, when not the thread's usual one."""
    summary: str
    """The session summary body."""
    turns: tuple[str, ...]
    """The turns, user first and then alternating with the agent."""


@dataclass(frozen=True)
class Thread:
    """A topic one user keeps coming back to over weeks."""

    key: str
    """Short name, also the topic tag."""
    user: str
    """The user id."""
    chat: str
    """The chat id most sessions of the thread happen in."""
    project: str
    """Title of the thread's project note."""
    phrase: str
    """How the thread is called in small talk ("the ski trip")."""
    stages: tuple[Stage, ...]
    """The sessions, oldest first."""


@dataclass(frozen=True)
class MemorySpec:
    """A typed memory note."""

    title: str
    """The note title (file name without `.md`)."""
    type: str
    """One of fact, entity, experience, belief, reflection, recipe."""
    confidence: float
    """0 to 1."""
    tags: tuple[str, ...]
    """The `tags` property."""
    related: tuple[str, ...]
    """Titles linked from the `related` property."""
    source: tuple[str, int] | None
    """(thread key, stage index) of the conversation the memory came from."""
    body: str
    """The Markdown body after the title heading."""


@dataclass(frozen=True)
class OtherSpec:
    """An ordinary note: a person, a project, a place, a book, the home page."""

    path: str
    """Vault-relative path."""
    frontmatter: dict[str, Any]
    """The properties, written as YAML."""
    body: str
    """The Markdown body."""
    thread: str | None = None
    """For project notes: the thread whose conversations are listed at the end."""


def _stages(text: str) -> tuple[Stage, ...]:
    """Parse the line format of the module docstring."""
    stages: list[Stage] = []
    head: tuple[str, float, str | None] | None = None
    summary = ""
    turns: list[str] = []
    lines: list[tuple[str, str]] = []
    for raw in text.strip("\n").splitlines():
        if raw.startswith("  ") and lines:
            lines[-1] = (lines[-1][0], f"{lines[-1][1]} {raw.strip()}")
        elif raw.strip():
            lines.append((raw[0], raw[2:].strip()))
    for kind, value in [*lines, ("@", "")]:
        if kind == "@":
            if head is not None:
                stages.append(Stage(head[0], head[1], head[2], summary, tuple(turns)))
            if value:
                when, title = (part.strip() for part in value.split("|", 1))
                ago, *chat = when.split()
                head, summary, turns = (title, float(ago), chat[0] if chat else None), "", []
        elif kind == "=":
            summary = value
        elif kind in "US":
            # Turns alternate, so a wrong prefix would put words in the wrong mouth.
            if (kind == "U") != (len(turns) % 2 == 0):
                raise ValueError(f"turn out of order in demo content: {value[:40]!r}")
            turns.append(value)
        else:
            raise ValueError(f"unknown line in demo content: {kind} {value[:40]!r}")
    return tuple(stages)


_SKI = _stages("""
@ 112 | Ski trip first ideas
= Alice wants a ski week for four (Tom, Jana, Luc) reachable by train from Lyon; Chamonix chosen,
  target 14 to 21 February.
U I want to organise a ski week this winter with Tom, Jana and Luc. Somewhere we can reach by train
  from Lyon. Any ideas?
S Three places work by train from Lyon: Chamonix (about 4 hours via Geneva and Saint-Gervais), Les
  Arcs (funicular straight from Bourg-Saint-Maurice station) and Val Thorens (train to Moûtiers plus
  an hour of bus). Chamonix has the most to do off the slopes if someone wants a rest day.
U Jana can't ski black runs and Luc only cares about off-piste. Chamonix sounds like it covers both.
S It does: Les Houches and La Flégère have easy blue runs for Jana, and Luc can book a guide for the
  Vallée Blanche. I started [[Ski Trip to Chamonix]] so the plan lives in one place.
U Good. The week of 14 February if possible, that's the school holiday for Tom.
S Noted: 14 to 21 February, four people, arriving by train. Next step is the budget; shall we do
  that next time?
@ 96 | Ski trip budget
= Budget capped at 1,800 EUR per person all included; estimate 1,695 EUR; Luc pays his own Vallée
  Blanche guide.
U Let's set the ski budget. I'd like to stay under 1,800 EUR per person, everything included.
S Rough split for 7 nights in Chamonix, per person: accommodation 650 EUR, a 6-day ski pass 395 EUR,
  train from Lyon and back 120 EUR, ski rental 180 EUR, food 350 EUR. That is 1,695 EUR and leaves
  about 105 EUR of slack.
U Luc wants the guided Vallée Blanche day. That's extra, right?
S Yes, a guide costs about 130 EUR per person in a group of four, which puts Luc at roughly 1,825
  EUR. I recorded the 1,800 EUR cap as [[Ski trip budget]].
U Fine, he can pay his own extras. The cap stays at 1,800.
@ 81 | Chalet shortlist
= Chalet in Les Praz booked: 2,520 EUR for the week (630 each), deposit 756 EUR paid, host Mme
  Girard, balance 1,764 EUR due a month before arrival.
U I found three chalets: one in Argentière, one in Les Praz and one in the centre. Which one?
S For your group I'd take Les Praz: it's on the bus line to La Flégère and the Brévent, ten minutes
  from the centre, and it has four bedrooms. Argentière is closer to the Grands Montets, which Luc
  would love, but it's 25 minutes by bus for everyone else.
U Les Praz is 2,520 EUR for the week, so 630 each.
S That's 20 EUR under the 650 we allowed. Deposits are usually 30% on booking.
U Booked it. Deposit paid, 756 EUR. The host is Mme Girard.
S Great. [[Chalet Les Praz]] now has the host and the deposit. The balance of 1,764 EUR is due 30
  days before arrival, so in mid-January.
@ 60 web-alice-laptop | Train tickets to Chamonix
= Four train returns Lyon Part-Dieu to Chamonix, 116 EUR each (464 EUR), out 14 February 07:34, back
  21 February 14:02.
U Trains: we leave Lyon Part-Dieu on Saturday 14 February. What's the best connection?
S The 07:34 TER to Geneva, then the Léman Express to Saint-Gervais and the Mont-Blanc Express to
  Chamonix, arriving at 12:10. Check-in at the chalet is from 16:00, so you have time for lunch.
U Tom hates changes. Is there anything direct?
S Not by rail. The alternative is a coach from Lyon airport, 3 h 30 and about 45 EUR one way; the
  train is 58 EUR one way with a Carte Avantage.
U Train it is, Tom will survive. Book four returns.
S Four returns at 116 EUR each, 464 EUR in total. The return is Saturday 21 February, 14:02 from
  Chamonix.
@ 38 | Ski passes and rentals
= Three Chamonix Le Pass (318 EUR) and one Mont Blanc Unlimited for Luc (395 EUR); four rentals at
  Sanglard Sports in Les Praz with 15% off, beginner package and helmet for Jana.
U Should we buy the Mont Blanc Unlimited pass or the cheaper Chamonix Le Pass?
S Le Pass covers Brévent-Flégère, Grands Montets and the small areas for 318 EUR for 6 days. Mont
  Blanc Unlimited adds the Aiguille du Midi, Courmayeur and Megève for 395 EUR. Only Luc needs the
  Aiguille du Midi, for the Vallée Blanche.
U So three Le Pass and one Unlimited.
S Yes, that saves 231 EUR for the group. For rentals, Sanglard Sports in Les Praz gives 15% off when
  you book online before 1 February.
U Book four rentals there. Jana needs beginner skis and a helmet.
S Done: four rentals at Sanglard, the beginner package with a helmet for Jana. The details are in
  [[Ski Trip to Chamonix]].
@ 17 | Ski trip packing list
= Packing list drafted for the ski week, with extras for Jana (hand warmers) and a small medical
  kit.
U Can you draft a packing list for the ski week? Jana has never been to the Alps in winter.
S Base layers, a fleece, waterproof jacket and trousers, three pairs of ski socks, goggles and
  sunglasses, SPF 50 sunscreen, gloves with liners, a neck buff, a small backpack and a holder for
  the ski pass. For Jana add hand warmers: the Flégère chairlift is cold in February.
U Also medical stuff, Luc always forgets.
S Added a small kit: blister plasters, ibuprofen, after-sun and everyone's health insurance cards.
  The Vallée Blanche needs a harness and crampons, which the guide provides.
@ 1.3 | Chalet balance and weather check
= Chalet balance of 1,764 EUR paid; 1,217 EUR per person spent so far (Luc 1,294 EUR), about 580 EUR
  left under the cap; 145 cm of snow at the top of La Flégère.
U I paid the chalet balance today, 1,764 EUR. Are we still under budget?
S Per person so far: chalet 630, train 116, pass 318 (Luc 395), rental 153 after the 15% discount,
  so 1,217 EUR (Luc 1,294 EUR). That leaves about 580 EUR each for food and extras under the 1,800
  EUR cap.
U And the weather for the 14th?
S Too far out for a real forecast, but the snow depth at the top of La Flégère is 145 cm, well above
  average. I'll check the forecast again a week before you leave.
@ 0.12 | Dinner booking in Chamonix
= Group dinner booked at La Télécabine, Wednesday 18 February at 19:30, about 55 EUR a head.
U Tom wants one nice dinner in Chamonix. Around 60 EUR a head.
S Two fit: La Télécabine (Savoyard, about 55 EUR with wine) and Le Cap Horn (fish and fondue, about
  65 EUR). La Télécabine takes groups of four on Wednesdays.
U La Télécabine on Wednesday 18 February then, at 19:30.
S Noted: La Télécabine, Wednesday 18 February, 19:30, four people. I'll remind you to confirm two
  weeks before.
""")

_HOMELAB = _stages("""
@ 104 | Home server migration plan
= Moving Nextcloud, Jellyfin, Home Assistant and Pi-hole from a Raspberry Pi 4 to a mini PC running
  Proxmox, host name atlas.
U My Raspberry Pi 4 is struggling. Nextcloud takes ages and Jellyfin can't transcode. I'm thinking
  of moving everything to a mini PC.
S An Intel NUC 13 Pro with an i5-1340P handles Jellyfin transcoding with Quick Sync and takes up to
  64 GB of RAM. The Pi runs Nextcloud, Jellyfin, Home Assistant and Pi-hole; all four run fine as
  containers or VMs on Proxmox.
U Proxmox or just Docker on Debian?
S Proxmox if you want snapshots before upgrades and Home Assistant OS as a full VM, which keeps
  add-ons working. Docker on Debian is simpler, but Home Assistant would run as a container without
  add-ons.
U Proxmox then. Let's call the new box atlas.
S Noted in [[Home Server Migration]]: host atlas, Proxmox VE, services Nextcloud, Jellyfin, Home
  Assistant and Pi-hole.
@ 88 | NUC order and storage
= NUC 13 Pro ordered (32 GB RAM, 1 TB NVMe); two 4 TB IronWolf disks as a ZFS mirror named tank in a
  USB enclosure; nightly backup to the Pi, weekly restic to Backblaze B2.
U Ordered the NUC 13 Pro with 32 GB of RAM and a 1 TB NVMe. For data I have two 4 TB Seagate
  IronWolf disks.
S The NUC has no room for two 3.5" disks, so they need a two-bay USB 3.2 enclosure with UASP. Make
  them a ZFS mirror so one disk can die without losing data.
U What about backups? A mirror isn't a backup.
S Right. A nightly Proxmox backup job to the old Pi with a USB disk, plus a weekly encrypted restic
  copy of the Nextcloud data to Backblaze B2, about 1.20 USD a month for 200 GB.
U Let's do both. The Pi becomes the backup target.
S Recorded: a 2 × 4 TB ZFS mirror named tank, nightly backups to the Pi, weekly restic to B2. The
  steps are in [[ZFS mirror on Proxmox]].
@ 70 | Proxmox install and first services
= Proxmox installed, pool up; Pi-hole moved to an LXC container, Home Assistant OS restored in a VM
  with all 37 automations; Zigbee stick passed through by id.
U Proxmox is installed and the ZFS pool is up. Where do I start?
S With Pi-hole in a small LXC container (512 MB of RAM), since nothing depends on it, then point the
  router's DNS at it. Then Home Assistant OS as a VM with 4 GB, restored from the Pi's backup.
U Home Assistant is restored, all 37 automations came back.
S Good. The Zigbee stick needs USB passthrough to the VM; use the by-id path so it survives reboots.
U Zigbee works after the passthrough. The hallway sensor took a minute to rejoin.
S Normal: battery sensors rejoin on their next wake-up. Pi-hole and Home Assistant are marked as
  migrated.
@ 45 | Nextcloud database collation error
= Nextcloud import failed on collation utf8mb4_general_ci (MariaDB 10.5 to 11); fixed with the
  charset flag and occ db:convert-mysql-charset; 184 GB copied in about 3 hours.
U The Nextcloud migration failed. The database import complains about collation utf8mb4_general_ci.
S The Pi ran MariaDB 10.5 and the new container has 11.x, which defaults to another collation.
  Import with --default-character-set=utf8mb4 and run occ db:convert-mysql-charset afterwards.
U That worked. 184 GB of files copied over in about 3 hours.
S Run occ files:scan --all so the file cache matches, then turn maintenance mode off. I wrote the
  fix down in [[Nextcloud migration hiccup]] so we don't hit it twice.
@ 24 | Jellyfin hardware transcoding
= Jellyfin transcoding moved to Intel Quick Sync (renderD128 passed into the container, render
  group): 12% CPU for 4K HEVC to 1080p; the Pi keeps only the backup role at 192.168.1.20.
U Jellyfin is up but transcoding still uses 100% CPU.
S Pass /dev/dri/renderD128 into the LXC container and enable Intel QSV under Playback. Add the
  jellyfin user to the render group too, or the device is there but not readable.
U Now it's 12% CPU for a 4K HEVC stream to 1080p. Massive.
S That's Quick Sync doing its job. The Pi now only serves as the backup target; keep its address
  192.168.1.20 reserved in the router.
@ 0.9 | Backup restore test
= Restores proven before wiping the Pi: Pi-hole container restored as ID 901, restic restore of
  Photos/2023 matched all 2,341 files; SD card kept two more weeks.
U I want to check the backups actually restore before I wipe the Pi's SD card.
S Good instinct. Restore the Pi-hole container from last night's backup under a new ID, say 901,
  with networking off, and look at its config. Then restore one Nextcloud folder from restic into
  /tmp and compare checksums.
U Both worked. The restic restore of Photos/2023 matched all 2,341 files.
S Then the backups are proven. I'd keep the SD card for two more weeks before wiping it, just in
  case.
@ 0.4 | Power usage of atlas
= atlas averages 11.8 W (peaks of 38 W while transcoding), about 26 EUR a year; migration done.
U How much power does atlas use? I put a smart plug on it.
S The plug reports 11.8 W on average over the last 24 hours, with peaks of 38 W while transcoding.
  At 0.25 EUR per kWh that's about 26 EUR a year, about the same as the Pi with its USB disk.
U Nice. So the migration is basically done.
S Yes: all four services run on atlas, backups are tested and power use is flat. I closed the open
  items in [[Home Server Migration]].
""")

_KITCHEN = _stages("""
@ 118 | Kitchen renovation kick-off
= Bob is redoing his 11 m² kitchen from 1994: sink under the window, an island of at most 120 × 60
  cm, budget cap 15,000 EUR.
U We're finally redoing the kitchen. It's 11 square metres, the cabinets are from 1994 and the hob
  is dying.
S To keep it manageable: settle the layout first, then the budget, then the contractor. Keep the L
  shape, or move the sink under the window?
U Sink under the window, and an island if it fits. Maximum 15,000 EUR.
S An island needs about 90 cm of clearance on each side; in 11 m² that works only up to 120 × 60 cm.
  I started [[Kitchen Renovation]] with the 15,000 EUR cap and the layout.
@ 99 | Contractor quotes
= Nowak Renovations chosen at 13,900 EUR (electrics, plumbing, disposal, worktop), start 3 March,
  about four weeks, payments 30/40/30.
U Three quotes: Nowak Renovations 13,900 EUR, BauPlus 16,400 EUR and a one-man firm at 11,200 EUR.
S The 11,200 EUR quote leaves out the electrics and the disposal, which usually add 1,500 to 2,000
  EUR. Nowak's includes electrics, plumbing and disposal, and a fixed price for the worktop.
U Marek from Nowak came recommended by my neighbour. He can start on 3 March.
S Then Nowak looks best. Ask [[Marek Nowak]] for the payment schedule in writing; 30% upfront, 40%
  at installation and 30% on completion is common.
U He agreed to 30/40/30.
S Recorded: 13,900 EUR with Nowak Renovations, start 3 March, about four weeks.
@ 77 | Worktop and appliances
= Oak worktop everywhere (4.2 m); Bosch induction hob (needs a 32 A circuit) and Siemens oven
  ordered for about 1,650 EUR, delivery 24 February.
U Oak or quartz for the worktop?
S Oak looks warm but needs oiling every six months and dislikes standing water by the sink. Quartz
  needs nothing but costs about 900 EUR more for your 4.2 metres.
U Oak everywhere, I like oiling things. For appliances, a Bosch induction hob and a Siemens oven.
S Oak it is. The Bosch hob needs a 32 A circuit, so tell Marek now and he'll plan the cable. The two
  appliances come to about 1,650 EUR, bought outside the quote.
U Ordered both, delivery on 24 February.
@ 55 | Cabinet order and new budget
= IKEA METOD cabinets with Voxtorp fronts, 2,780 EUR on top of the quote; budget cap raised to
  18,500 EUR, final.
U Marek says we should get IKEA METOD cabinets and he'll fit them. Which fronts?
S With oak worktops, Voxtorp matt white or Askersund light ash both work. Voxtorp is handle-free,
  which suits a small kitchen with an island. The full list comes to 2,780 EUR with Voxtorp fronts.
U Voxtorp. Is that inside the 13,900?
S No: 13,900 + 2,780 for cabinets + 1,650 for appliances is 18,330 EUR, which is 3,330 over the cap.
U Ugh. Okay, the cap moves to 18,500, and that's final.
S Updated [[Kitchen renovation budget]] to 18,500 EUR, with 170 EUR of slack.
@ 31 mail-bob | Demolition and the lead pipe
= Demolition found a lead water pipe behind the sink; replaced as a 420 EUR change order; total
  18,750 EUR, 250 over the cap; LED strips kept.
U Demolition is done. They found that the old water pipe behind the sink is lead.
S Replacing it is the right call. Marek should price it as a change order before he starts; 3 metres
  with fittings is usually 350 to 500 EUR.
U Marek quoted 420 EUR. I said yes.
S Recorded: +420 EUR, total 18,750 EUR, 250 over the 18,500 cap. Dropping the LED strips under the
  cabinets would save 190 EUR.
U Keep the LEDs, I'll eat the 250.
@ 9 | Worktop installation
= Oak worktop fitted; 3 mm expansion gap at the wall gets a silicone bead; first oiling with Osmo
  Top Oil, two coats 8 hours apart, sink usable 24 hours later.
U The worktop is in. The oak looks great but there's a 3 mm gap at the wall.
S 3 mm at a wall is normal for oak, which moves with humidity; a silicone bead covers it. The joint
  between the two worktop pieces should be tight, under half a millimetre.
U The joint is tight. Marek does the silicone tomorrow.
S Good. First oiling with Osmo Top Oil before the sink is used: two thin coats, 8 hours apart. The
  routine is in [[Oak worktop oiling]].
U How long until we can use the sink?
S 24 hours after the second coat.
@ 0.7 | Kitchen snag list
= Snag list: hob drawer closes too hard, scratched Voxtorp front (IKEA replacement), dead island
  socket; final payment of 4,170 EUR held until all three are fixed.
U We're almost done. Can you keep a snag list? The drawer under the hob closes too hard, one Voxtorp
  front has a scratch and the island socket doesn't work.
S Snag list in [[Kitchen Renovation]]: 1) hob drawer damper, 2) scratched front, to be replaced by
  IKEA (bring the order number), 3) dead island socket for Marek. The final 30%, 4,170 EUR, should
  wait until all three are fixed.
U Agreed. I'll tell Marek we pay when the snags are done.
""")

_TAXES = _stages("""
@ 110 | Tax return paperwork
= First freelance tax return; accountant Ingrid Falk; deadline 31 May when filing alone.
U I need to get on top of my tax return. First year freelancing and I have no idea what I can
  deduct.
S As a freelancer you deduct business expenses: equipment, software, part of your phone and
  internet, professional insurance, and a home office if it's your main place of work. Filing
  yourself, the deadline is 31 May; with an accountant it's usually later.
U I'll use an accountant, Ingrid Falk. My sister recommended her.
S Good. I added [[Ingrid Falk]] and started [[Tax Return]]. She'll want every invoice, the bank
  statements and the receipts.
@ 90 | Invoices and receipts
= 23 invoices for 41,300 EUR; MacBook (2,199 EUR) depreciated over 3 years; receipts scanned per
  month, January to June done.
U I issued 23 invoices, 41,300 EUR in total. The receipts are a mess.
S Sort them by category: hardware (the 2,199 EUR MacBook counts, depreciated over 3 years),
  software, phone and internet at 50% business use, coworking days and travel. One folder per month
  makes Ingrid's life easier.
U Done for January to June. The rest is in a shoebox.
S That's the half that matters least; the big purchases were in spring. Twenty minutes a day and
  it's done in a week.
@ 66 tg-5120 | Home office deduction
= Office room doubles as guest room, so the full deduction is risky; taking the flat rate of 6 EUR
  per day, up to 1,260 EUR.
U Can I deduct my home office? It's a separate room, 12 of our 85 square metres.
S If the room is used almost only for work, yes: 12/85, about 14% of rent, heating and electricity.
  The alternative is a flat rate of 6 EUR per home-office day, up to 1,260 EUR a year.
U The room also has the guest bed.
S Then the full deduction is risky, since mixed use usually rules it out. Take the 1,260 EUR flat
  rate; it needs no proof. I wrote the rule down in [[Home-office deduction checklist]].
@ 42 | Meeting with Ingrid
= Ingrid expects quarterly prepayments of about 1,700 EUR from next year on a profit of about 31,000
  EUR; Bob opens a separate tax savings account; her fee is 890 EUR.
U Had the meeting with Ingrid. She says I should have been making quarterly prepayments.
S The tax office will probably set prepayments from next year based on this year's profit. On about
  31,000 EUR of profit, expect around 1,700 EUR per quarter. Setting aside 30% of every invoice
  avoids surprises.
U I'll open a separate savings account for tax.
S Good habit. Ingrid's fee of 890 EUR is itself deductible next year.
@ 20 | Missing receipts
= Two receipts were missing: a Dell U2723QE monitor (4 December, 519 EUR) and a train to a client in
  Hamburg (12 November, 89.90 EUR); both found and sent to Ingrid.
U Ingrid says two receipts are missing: the monitor from December and the train to the Hamburg
  client.
S The monitor is the Dell U2723QE, ordered on 4 December for 519 EUR; the invoice is in your Dell
  account under Orders. The train was on 12 November, 89.90 EUR; the rail invoice goes to the email
  on your rail card account.
U Found both and sent them to Ingrid.
S That completes the file. She needs about two weeks once she has everything.
@ 1.1 | Tax return filed
= Ingrid filed the return; expected refund 640 EUR; first prepayment due 10 March.
U Ingrid filed the return! The expected refund is 640 EUR.
S Well done, that closes [[Tax Return]] for this year. Still open: the tax savings account for next
  year's prepayments, and keeping receipts per month so next year takes an afternoon, not a shoebox.
U Set a reminder for the first prepayment.
S The first prepayment is due on 10 March; I'll bring it up at the start of March.
""")

_RUST = _stages("""
@ 115 | Rust learning plan
= Ten-week Rust plan at 45 minutes a day: the Rust Book chapters 1 to 10 with Rustlings, then 13 to
  16, then a command-line todo app with a JSON file and clap.
U I want to learn Rust properly this time. I know Python and some Go. How should I structure it?
S Ten weeks at 45 minutes a day: weeks 1 to 3 the Rust Book chapters 1 to 10 with Rustlings
  alongside, weeks 4 and 5 chapters 13 to 16 (iterators, smart pointers, concurrency), weeks 6 to 10
  a real project. Coming from Python the borrow checker is the hard part, so don't skip chapter 4.
U What project?
S A command-line todo app that stores tasks in a JSON file. It touches structs, enums, error
  handling, file I/O and clap, and it's small enough to finish. The plan is in [[Rust Learning
  Plan]].
@ 100 | Ownership and borrowing
= Moves versus borrows explained (&str to read, &mut String to change; many readers or one writer);
  Rustlings move_semantics 5 of 5.
U Chapter 4 broke my brain. Why can't I use a String after passing it to a function?
S Passing a String by value moves it into the function, and it's dropped when the function returns.
  If you only read it, take &str and the caller keeps ownership; to change it, take &mut String.
U So &str is like a read-only view?
S Exactly, a borrowed slice. You can have many readers or one writer at a time, never both; that's
  the whole borrow checker in one sentence.
U That helps. Rustlings move_semantics done, 5 out of 5.
@ 84 | Rustlings and lifetimes
= Rustlings at 64 of 94 after the lifetimes exercises; lifetimes explained as labels tying a
  returned reference to its inputs.
U I'm at 61 of 94 Rustlings exercises. Lifetimes are next and everyone says they're awful.
S They're easier as labels than as something you control: 'a just says the returned reference lives
  as long as the inputs. Most of the time the elision rules mean you don't write them at all.
U It took an hour, but lifetimes3 passes. I'm at 64.
S Three exercises in one session is a good pace; you'll finish Rustlings in about two weeks, on
  plan.
@ 63 | Todo CLI design
= The todo app is called tock: task.rs, store.rs (serde JSON), main.rs (clap subcommands add, list,
  done, remove); anyhow for errors.
U Starting the todo app. How should I lay out the code?
S Three modules: task.rs with a Task struct (id, title, done, an optional due date), store.rs to
  load and save the JSON with serde, and main.rs with clap subcommands add, list, done and remove.
U I called it tock. Should I use anyhow or thiserror?
S For a binary like tock, anyhow is simpler: anyhow::Result in main and context() on file errors.
  thiserror pays off when you write a library. Good name, by the way.
@ 40 | Error handling in tock
= tock no longer crashes without a JSON file (NotFound gives an empty list); --due flag with chrono;
  9 tests pass.
U tock crashes when the JSON file doesn't exist yet.
S In store.rs, match the io::ErrorKind::NotFound case and return an empty task list instead of
  passing the error up.
U Fixed. I also added a --due flag with chrono.
S Nice. Add a test for the missing file with the tempfile crate so it stays fixed.
U Tests pass, 9 of them.
@ 16 | Iterators and closures
= The list command rewritten with iter().filter() and sort_by_key, undated tasks last; 6 lines; week
  7 of 10, ahead of plan.
U The list command filters done tasks with a for loop and a mutable Vec. Can iterators make it
  nicer?
S Yes: tasks.iter().filter(|t| !t.done) and collect. Sorting by due date with sort_by_key puts
  undated tasks first, so map a missing date to NaiveDate::MAX to push them to the end.
U So much shorter. The whole list function is 6 lines now.
S That's the chapter 13 payoff. You're in week 7 of 10, ahead of the [[Rust Learning Plan]].
@ 1.5 | Publishing tock on crates.io
= tock published as tock-cli 0.1.0 on crates.io (the name tock was taken), three weeks ahead of
  plan.
U Should I publish tock on crates.io?
S Sure, it's a good first crate. You need a license field in Cargo.toml, a README and a free name;
  tock is taken, so something like tock-cli. Run cargo publish --dry-run first.
U Published as tock-cli 0.1.0!
S Congratulations, that's the project milestone done three weeks early. Next could be the book Rust
  for Rustaceans, or a small fix for ripgrep or clap.
""")

_RUNNING = _stages("""
@ 108 | Half marathon plan
= Lisbon half marathon on 8 March, goal under 2 hours (5:41 per km); three runs a week, long run on
  Sunday from 12 to 19 km, peak about 42 km a week, easy pace about 6:30 per km.
U I signed up for the Lisbon half marathon on 8 March. My longest run so far is 12 km. Can you make
  a plan?
S Fourteen weeks is plenty. Three runs a week: one easy, one with intervals or tempo, and a long run
  on Sunday growing from 12 to 19 km. Weekly volume from 25 km to about 42 km in week 11, then two
  weeks of taper.
U My goal is under 2 hours.
S Under 2:00 means 5:41 per km. Your easy pace should be around 6:30 per km, slower than feels
  natural. It's all in [[Half Marathon Training]].
@ 86 | Easy pace is too slow
= Easy runs kept under 150 bpm heart rate whatever the pace (6:40 per km on hills).
U The easy runs at 6:30 feel ridiculous. I keep drifting to 5:50.
S That's the most common mistake. Easy runs build your base only when they're easy; at 5:50 you're
  near tempo and too tired for Thursday's intervals. Go by heart rate: under 150 bpm, whatever pace
  it gives.
U 150 bpm means 6:40 on hills. Embarrassing, but fine.
S Within six weeks the same heart rate will give a faster pace; that's the point. The rule is saved
  as [[Easy-run pacing rule]].
@ 65 | Long run in the rain
= 16 km long run in the rain at 6:05 per km; sore shins; shoes at about 780 km, replaced with Asics
  Novablast.
U 16 km long run today in pouring rain, 6:05 average. My shins hurt a bit.
S Good run, but sore shins after going from 14 to 16 km can be early shin splints. Take an extra
  rest day, ice for 15 minutes and check your shoes: how many kilometres do they have?
U About 780 km. Ah.
S That's past the usual 600 to 800 km. New shoes before the next long run; the Asics Novablast you
  mentioned suits a neutral runner. Logged in [[Long run in the rain]].
@ 49 | Interval session
= 6 × 800 m in 3:49 to 3:58 (about 4:54 per km) predicts 1:53 to 1:55; no shin pain with new shoes.
U Thursday intervals: 6 × 800 m with 400 m jogs. Times 3:58, 3:55, 3:57, 3:52, 3:54, 3:49.
S Very even, and faster at the end. 3:55 per 800 m is 4:54 per km, which predicts a half marathon of
  about 1:53 to 1:55. Under 2:00 looks safe.
U The new shoes helped, no shin pain.
S Great. Next Thursday is 5 × 1 km at 5:00.
@ 27 | Race week nutrition
= Race week: nothing new, carb loading two days before (about 460 g a day at 58 kg), breakfast 3
  hours before, gels at km 7 and 14 with water.
U What should I eat in race week? Last time I had stomach trouble at km 15.
S Nothing new in race week. Load carbs moderately in the last two days, about 8 g per kg. On race
  day, breakfast 3 hours before, then a gel at km 7 and km 14 with water rather than sports drink.
U I weigh 58 kg, so about 460 g of carbs a day?
S Yes, about 460 g. It's more than it sounds; rice and bananas make it easy.
@ 6 | Lisbon half marathon result
= Lisbon half marathon finished in 1:54:12 (5:25 per km); a recovery week, then maybe a marathon in
  autumn.
U Finished the Lisbon half in 1:54:12!!
S Under 2:00 by almost six minutes, congratulations! 5:25 per km is exactly what the intervals
  predicted. Take a full week easy before running again.
U I'm already thinking about a full marathon in the autumn.
S That's a bigger step: 16 to 18 weeks with long runs up to 32 km. Let's plan it after your recovery
  week. The result is logged in [[Half Marathon Training]].
""")

_BOOKS = _stages("""
@ 92 | Book club pick
= Carol picks The Left Hand of Darkness for the book club of eight, which meets at Café Lindqvist on
  the first Thursday of the month.
U It's my turn to pick the book club book. Something we can discuss for two hours, under 350 pages.
S Some that start arguments: The Left Hand of Darkness by Ursula K. Le Guin (about 300 pages),
  Piranesi by Susanna Clarke (245 pages) and Klara and the Sun by Kazuo Ishiguro (303 pages).
U The Left Hand of Darkness. We're eight people and meet at Café Lindqvist on the first Thursday of
  the month.
S A great pick for eight, there's a lot to argue about. Noted in [[Book Club]] and [[The Left Hand
  of Darkness]].
@ 72 | Discussion questions for Le Guin
= Four discussion questions for The Left Hand of Darkness; lead with the journey across the Gobrin
  Ice.
U Can you suggest discussion questions for the Le Guin?
S 1) How does Genly's view of Estraven change, and when? 2) What would politics be without a fixed
  gender? 3) Why does Le Guin use "he" for the Gethenians, and did it bother you? 4) Is the crossing
  of the Gobrin Ice the real centre of the book?
U The ice question is perfect, half the group loves that part.
S Then lead with it, and keep the pronoun question for when the talk slows down.
@ 52 | Book club recap
= Meeting recap: Hanna disliked the first 80 pages but loved the ending; everyone saw Estraven as
  the hero; next book Piranesi.
U Great meeting yesterday. Hanna hated the first 80 pages but loved the ending.
S Common with Le Guin: the first chapters are heavy on world-building. Anything the group agreed on?
U Everyone thought Estraven is the real hero. And we voted for the next book: Piranesi.
S Recorded in [[Book Club]]: Estraven as the hero, Hanna's verdict, and [[Piranesi]] for the next
  first Thursday.
@ 34 | Piranesi first impressions
= Halfway through Piranesi; hint to watch the journal numbering; questions later.
U Halfway through Piranesi. I love the House but I'm confused about the Other.
S No spoilers: watch the journal entries and their numbering, they say more than the narrator
  realises.
U Oh, the numbering! I'll reread the first part.
S That's the best way to read it. Want questions for the meeting?
U Later, when I've finished.
@ 12 | Book club venue change
= Café Lindqvist closes for renovation; the club moves to the public library's meeting room (free,
  until 21:00, book two weeks ahead), booked by Hanna.
U Café Lindqvist closes for renovation in the spring. We need a new place for eight on Thursday
  evenings.
S Options: the back room of Bar Olympe (free if you order drinks, quiet after 19:00), the public
  library's meeting room (free until 21:00, book two weeks ahead), or rotating between your homes.
U The library room. Hanna will book it.
S Updated [[Book Club]]: the library meeting room from next month, booked by [[Hanna Berg]].
@ 3 | Next book shortlist
= Shortlist after Piranesi: Sea of Tranquility (Emily St. John Mandel) and Tomorrow, and Tomorrow,
  and Tomorrow (Gabrielle Zevin).
U We need a shortlist for after Piranesi. Someone suggested Sea of Tranquility.
S A good candidate: Emily St. John Mandel, 255 pages, time travel and a pandemic, easy in a month.
  Others: Tomorrow, and Tomorrow, and Tomorrow by Gabrielle Zevin, or The Overstory for a challenge.
U Put Sea of Tranquility and the Zevin on the shortlist.
S Both are on the shortlist in [[Book Club]]: [[Sea of Tranquility]] and Tomorrow, and Tomorrow, and
  Tomorrow.
""")

THREADS: tuple[Thread, ...] = (
    Thread("ski-trip", "alice", "tg-4417", "Ski Trip to Chamonix", "ski trip", _SKI),
    Thread("homelab", "alice", "web-alice-laptop", "Home Server Migration", "home server", _HOMELAB),
    Thread("kitchen", "bob", "tg-5120", "Kitchen Renovation", "kitchen", _KITCHEN),
    Thread("taxes", "bob", "mail-bob", "Tax Return", "tax return", _TAXES),
    Thread("rust", "carol", "web-carol-desk", "Rust Learning Plan", "Rust plan", _RUST),
    Thread("running", "carol", "tg-6033", "Half Marathon Training", "training plan", _RUNNING),
    Thread("book-club", "carol", "discord-bookclub", "Book Club", "book club", _BOOKS),
)
"""Every conversation thread of the demo vault."""

OPENERS: tuple[tuple[str, str], ...] = (
    ("Hi, quick one about the {phrase}.", "Sure, go ahead."),
    ("Morning! Back to the {phrase} for a minute.", "Good morning. I have the notes open."),
    ("Hey, got a moment for the {phrase}?", "Of course. Last time we covered {previous}; what's new?"),
    ("Evening. Can we do a bit of {phrase} stuff?", "Yes, I'm here."),
)
"""Small talk that may open a session: (user, agent)."""

CLOSERS: tuple[tuple[str, str], ...] = (
    ("Thanks, that's all for now.", "You're welcome. I'll keep the {phrase} notes up to date."),
    ("Perfect, thank you.", "Anytime. Ping me when there's news."),
    ("Great, talk later.", "Talk soon."),
    ("Thanks! I'll report back.", "Sounds good."),
)
"""Small talk that may close a session: (user, agent)."""

AGENT_CLOSERS: tuple[str, ...] = (
    "Noted. I'll keep the {phrase} notes up to date.",
    "Understood, it's in the notes.",
    "Okay, noted.",
)
"""A closing line for sessions whose last word was the user's."""

MEMORY: tuple[MemorySpec, ...] = (
    MemorySpec(
        "Ski trip budget",
        "fact",
        0.95,
        ("ski-trip", "budget"),
        ("Ski Trip to Chamonix", "Alice Martin"),
        ("ski-trip", 1),
        """\
The ski week in [[Chamonix]] (14 to 21 February) is capped at **1,800 EUR per person**, everything
included. Estimate: accommodation 650, ski pass 395, train 120, rental 180, food 350 = 1,695 EUR.
Extras such as Luc's guided Vallée Blanche day (about 130 EUR) are paid by whoever wants them.
""",
    ),
    MemorySpec(
        "Chalet Les Praz",
        "entity",
        0.9,
        ("ski-trip", "accommodation"),
        ("Ski Trip to Chamonix", "Chamonix"),
        ("ski-trip", 2),
        """\
Four-bedroom chalet in Les Praz, ten minutes from the centre of [[Chamonix]], on the bus line to La
Flégère. 2,520 EUR for the week, host Mme Girard. Deposit 756 EUR paid; balance 1,764 EUR.

## Arrival
Check-in from 16:00 on Saturday 14 February; check-out on 21 February before the 14:02 train.
""",
    ),
    MemorySpec(
        "Alice prefers trains over flights",
        "belief",
        0.7,
        ("travel", "preference"),
        ("Alice Martin",),
        ("ski-trip", 3),
        """\
[[Alice Martin]] picks the train even with three changes, and Tom puts up with it. Offer rail first
when she plans a trip; mention coaches only as a fallback.
""",
    ),
    MemorySpec(
        "What worked planning the ski trip",
        "reflection",
        0.6,
        ("ski-trip", "planning"),
        ("Ski Trip to Chamonix",),
        ("ski-trip", 5),
        """\
Setting the budget cap before looking at chalets kept every later choice simple: each option was
just "under or over 1,800 EUR". Splitting the passes by need (three Le Pass, one Mont Blanc
Unlimited) saved 231 EUR without anyone giving anything up. See [[Ski trip budget]].
""",
    ),
    MemorySpec(
        "Home server hardware",
        "fact",
        0.9,
        ("homelab", "hardware"),
        ("Home Server Migration",),
        ("homelab", 1),
        """\
atlas is an Intel NUC 13 Pro (i5-1340P, 32 GB RAM, 1 TB NVMe) running Proxmox VE. Data lives on two
4 TB Seagate IronWolf disks in a USB enclosure, as the ZFS mirror `tank`
([[ZFS mirror on Proxmox]]). It draws 11.8 W on average. The old Raspberry Pi 4 (192.168.1.20) is
the backup target.
""",
    ),
    MemorySpec(
        "ZFS mirror on Proxmox",
        "recipe",
        0.85,
        ("homelab", "zfs", "how-to"),
        ("Home Server Migration", "Home server hardware"),
        ("homelab", 1),
        """\
1. Find the disks by id: `ls -l /dev/disk/by-id/` (never use sdX names, they change).
2. `zpool create -o ashift=12 tank mirror /dev/disk/by-id/ata-A /dev/disk/by-id/ata-B`
3. `zfs set compression=lz4 tank` and `zfs set atime=off tank`.
4. Add it in Proxmox under Datacenter, Storage, ZFS.
5. Schedule a monthly scrub: `zpool scrub tank` from cron.
""",
    ),
    MemorySpec(
        "Nextcloud migration hiccup",
        "experience",
        0.8,
        ("homelab", "nextcloud"),
        ("Home Server Migration",),
        ("homelab", 3),
        """\
Moving Nextcloud from MariaDB 10.5 on the Pi to 11.x on atlas failed on collation
utf8mb4_general_ci. Fix: import with `--default-character-set=utf8mb4`, then
`occ db:convert-mysql-charset` and `occ files:scan --all`. 184 GB took about 3 hours to copy.
""",
    ),
    MemorySpec(
        "Kitchen renovation budget",
        "fact",
        0.9,
        ("kitchen", "budget"),
        ("Kitchen Renovation", "Bob Keller"),
        ("kitchen", 3),
        """\
Cap raised from 15,000 to **18,500 EUR** ("final"). Committed: [[Nowak Renovations]] 13,900 EUR,
IKEA cabinets 2,780 EUR, appliances 1,650 EUR, lead pipe change order 420 EUR: 18,750 EUR in all,
250 EUR over the cap, which [[Bob Keller]] accepted.
""",
    ),
    MemorySpec(
        "Nowak Renovations",
        "entity",
        0.85,
        ("kitchen", "contractor"),
        ("Marek Nowak", "Kitchen Renovation"),
        ("kitchen", 1),
        """\
Renovation firm run by [[Marek Nowak]], recommended by Bob's neighbour. Quote 13,900 EUR including
electrics, plumbing, disposal and the oak worktop. Payments 30% upfront, 40% at installation, 30% on
completion. Started on 3 March.
""",
    ),
    MemorySpec(
        "Oak worktop oiling",
        "recipe",
        0.8,
        ("kitchen", "how-to"),
        ("Kitchen Renovation",),
        ("kitchen", 5),
        """\
- Before first use: two thin coats of Osmo Top Oil, 8 hours apart; use the sink 24 hours after the
  second coat.
- Every six months: sand lightly with 240 grit, one thin coat.
- Wipe standing water near the sink at once; oak stains black where water sits.
""",
    ),
    MemorySpec(
        "Bob underestimates renovation costs",
        "belief",
        0.55,
        ("kitchen", "pattern"),
        ("Bob Keller", "Kitchen renovation budget"),
        ("kitchen", 4),
        """\
[[Bob Keller]] set 15,000 EUR without counting cabinets or appliances, and ended at 18,750 EUR. When
he plans the next project, list the items outside the contractor's quote up front.
""",
    ),
    MemorySpec(
        "Tax filing deadline",
        "fact",
        0.85,
        ("taxes", "deadline"),
        ("Tax Return",),
        ("taxes", 0),
        """\
Filing alone, the return is due on **31 May**; through an accountant ([[Ingrid Falk]]) the deadline
is later. The first quarterly prepayment of next year is due on 10 March.
""",
    ),
    MemorySpec(
        "Home-office deduction checklist",
        "recipe",
        0.75,
        ("taxes", "how-to"),
        ("Tax Return",),
        ("taxes", 2),
        """\
1. Is the room used (almost) only for work? A guest bed counts as mixed use.
2. If yes: deduct the room's share of rent, heating and electricity (12/85 m² for Bob).
3. If not: take the flat rate of 6 EUR per home-office day, up to 1,260 EUR a year; no proof needed.
""",
    ),
    MemorySpec(
        "Lessons from the first freelance year",
        "reflection",
        0.65,
        ("taxes", "freelance"),
        ("Tax Return", "Bob Keller"),
        ("taxes", 5),
        """\
Receipts in a shoebox cost [[Bob Keller]] a week of evenings. Scanning receipts every month and
putting 30% of each invoice into a separate account would have made the return and the prepayments
painless. The refund was 640 EUR.
""",
    ),
    MemorySpec(
        "Carol learns best with small projects",
        "belief",
        0.65,
        ("rust", "learning"),
        ("Carol Nguyen", "Rust Learning Plan"),
        ("rust", 4),
        """\
[[Carol Nguyen]] moved fastest once she had tock to build: the iterator and error-handling chapters
stuck when she needed them for a real bug. Suggest a small concrete project early.
""",
    ),
    MemorySpec(
        "tock-cli",
        "entity",
        0.9,
        ("rust", "project"),
        ("Rust Learning Plan", "Carol Nguyen"),
        ("rust", 6),
        """\
Carol's command-line todo app in Rust, published on crates.io as tock-cli 0.1.0. Modules task.rs,
store.rs (serde JSON) and main.rs (clap: add, list, done, remove); anyhow for errors, chrono for
`--due`, 9 tests.
""",
    ),
    MemorySpec(
        "First week with lifetimes",
        "experience",
        0.7,
        ("rust", "learning"),
        ("Rust Learning Plan",),
        ("rust", 2),
        """\
Lifetimes took an hour to click: reading `'a` as a label tying the returned reference to its inputs
worked better than thinking of it as control. Rustlings went from 61 to 64 of 94 that evening.
""",
    ),
    MemorySpec(
        "Easy-run pacing rule",
        "recipe",
        0.8,
        ("running", "how-to"),
        ("Half Marathon Training",),
        ("running", 1),
        """\
Run easy days by heart rate, not pace: stay under 150 bpm, even if that means 6:40 per km on hills.
Easy runs that drift to tempo pace leave no legs for the interval day.
""",
    ),
    MemorySpec(
        "Long run in the rain",
        "experience",
        0.75,
        ("running",),
        ("Half Marathon Training", "Carol Nguyen"),
        ("running", 2),
        """\
16 km at 6:05 per km in pouring rain; shins sore afterwards. The shoes had about 780 km on them and
were replaced by Asics Novablast; no shin pain since.
""",
    ),
    MemorySpec(
        "Lisbon half marathon result",
        "fact",
        0.95,
        ("running", "race"),
        ("Half Marathon Training", "Carol Nguyen"),
        ("running", 5),
        """\
[[Carol Nguyen]] ran the Lisbon half marathon on 8 March in **1:54:12** (5:25 per km), almost six
minutes under her goal of 2 hours. Next idea: a full marathon in the autumn.
""",
    ),
    MemorySpec(
        "Café Lindqvist",
        "entity",
        0.8,
        ("book-club", "place"),
        ("Book Club",),
        ("book-club", 0),
        """\
Café where the [[Book Club]] met on the first Thursday of each month, eight people. Closes for
renovation in the spring; the club moves to the public library's meeting room.
""",
    ),
    MemorySpec(
        "Open threads across users",
        "reflection",
        0.5,
        ("review",),
        ("Home",),
        None,
        """\
Weekly review by [[Sentinel]]: [[Alice Martin]] has the ski week ahead (dinner booked, forecast to
check), [[Bob Keller]] holds the last kitchen payment until the snags are fixed and owes the first
tax prepayment on 10 March, and [[Carol Nguyen]] is recovering from her half marathon while the
[[Book Club]] picks its next book.
""",
    ),
)
"""The typed memory notes: all six types, each with a confidence."""


def _person(aliases: list[str], role: str) -> dict[str, Any]:
    """Frontmatter of a person note."""
    return {"type": "person", "aliases": aliases, "role": role, "tags": ["person"]}


OTHERS: tuple[OtherSpec, ...] = (
    OtherSpec(
        "Home.md",
        {"tags": ["index"]},
        """\
# Home

What [[Sentinel]] remembers for its three users.

- [[Alice Martin]]: [[Ski Trip to Chamonix]], [[Home Server Migration]]
- [[Bob Keller]]: [[Kitchen Renovation]], [[Tax Return]]
- [[Carol Nguyen]]: [[Rust Learning Plan]], [[Half Marathon Training]], [[Book Club]]
""",
    ),
    OtherSpec(
        "People/Alice Martin.md",
        _person(["alice", "Ali"], "user"),
        """\
# Alice Martin

UX designer in Lyon, lives with [[Tom Martin|Tom]]. Talks to [[Sentinel]] on Telegram and from her
laptop. Plans: [[Ski Trip to Chamonix]], [[Home Server Migration]].
""",
    ),
    OtherSpec(
        "People/Bob Keller.md",
        _person(["bob", "Bobby"], "user"),
        """\
# Bob Keller

Freelance backend developer in Bremen, first year on his own. Projects: [[Kitchen Renovation]] with
[[Marek Nowak]], and the [[Tax Return]] with [[Ingrid Falk]].
""",
    ),
    OtherSpec(
        "People/Carol Nguyen.md",
        _person(["carol"], "user"),
        """\
# Carol Nguyen

Data analyst in Lisbon. Learning Rust ([[Rust Learning Plan]]), running ([[Half Marathon Training]])
and hosting the [[Book Club]] with [[Hanna Berg]].
""",
    ),
    OtherSpec(
        "People/Tom Martin.md",
        _person(["Tom"], "family"),
        """\
# Tom Martin

[[Alice Martin]]'s partner, a teacher, so trips follow the school holidays. Dislikes train changes.
""",
    ),
    OtherSpec(
        "People/Marek Nowak.md",
        _person(["Marek"], "contractor"),
        """\
# Marek Nowak

Runs [[Nowak Renovations]]. Doing [[Bob Keller]]'s [[Kitchen Renovation]] since 3 March.
""",
    ),
    OtherSpec(
        "People/Ingrid Falk.md",
        _person(["Ingrid"], "accountant"),
        """\
# Ingrid Falk

Accountant in Bremen, recommended by Bob's sister. Fee 890 EUR. Files Bob's [[Tax Return]].
""",
    ),
    OtherSpec(
        "People/Hanna Berg.md",
        _person(["Hanna"], "friend"),
        """\
# Hanna Berg

Member of the [[Book Club]]; books the library room. Hated the first 80 pages of
[[The Left Hand of Darkness]] and loved the ending.
""",
    ),
    OtherSpec(
        "People/Sentinel.md",
        {"type": "agent", "aliases": ["sentinel"], "tags": ["agent"]},
        """\
# Sentinel

The assistant that writes this vault: a session summary per turn under `ops/sessions/`, a
conversation note per session in `Conversations/`, and typed notes in `Memory/`.
""",
    ),
    OtherSpec(
        "Projects/Ski Trip to Chamonix.md",
        {
            "type": "project",
            "aliases": ["ski trip", "Chamonix trip"],
            "status": "active",
            "tags": ["project", "ski-trip"],
            "owner": "[[Alice Martin]]",
        },
        """\
# Ski Trip to Chamonix

[[Alice Martin]], [[Tom Martin]], Jana and Luc in [[Chamonix]], 14 to 21 February.

- Budget: [[Ski trip budget]] (1,800 EUR per person)
- Stay: [[Chalet Les Praz]] (see [[Chalet Les Praz#Arrival]])
- Travel: train from Lyon Part-Dieu, 07:34 out, 14:02 back
""",
        thread="ski-trip",
    ),
    OtherSpec(
        "Projects/Home Server Migration.md",
        {
            "type": "project",
            "aliases": ["homelab", "atlas"],
            "status": "done",
            "tags": ["project", "homelab"],
            "owner": "[[Alice Martin]]",
        },
        """\
# Home Server Migration

From a Raspberry Pi 4 to atlas, see [[Home server hardware]]. Steps in [[ZFS mirror on Proxmox]];
lessons in [[Nextcloud migration hiccup]].
""",
        thread="homelab",
    ),
    OtherSpec(
        "Projects/Kitchen Renovation.md",
        {
            "type": "project",
            "aliases": ["kitchen"],
            "status": "snags",
            "tags": ["project", "kitchen"],
            "owner": "[[Bob Keller]]",
        },
        """\
# Kitchen Renovation

11 m², sink under the window, small island, oak worktop. Contractor [[Nowak Renovations]]
([[Marek Nowak]]). Money: [[Kitchen renovation budget]]. Care: [[Oak worktop oiling]].
""",
        thread="kitchen",
    ),
    OtherSpec(
        "Projects/Tax Return.md",
        {
            "type": "project",
            "aliases": ["taxes"],
            "status": "filed",
            "tags": ["project", "taxes"],
            "owner": "[[Bob Keller]]",
        },
        """\
# Tax Return

Bob's first freelance return, filed by [[Ingrid Falk]]. See [[Tax filing deadline]] and
[[Home-office deduction checklist]].
""",
        thread="taxes",
    ),
    OtherSpec(
        "Projects/Rust Learning Plan.md",
        {
            "type": "project",
            "aliases": ["Rust plan"],
            "status": "active",
            "tags": ["project", "rust"],
            "owner": "[[Carol Nguyen]]",
        },
        """\
# Rust Learning Plan

Ten weeks, 45 minutes a day: the Rust Book, Rustlings, then [[tock-cli]].
""",
        thread="rust",
    ),
    OtherSpec(
        "Projects/Half Marathon Training.md",
        {
            "type": "project",
            "aliases": ["running plan"],
            "status": "done",
            "tags": ["project", "running"],
            "owner": "[[Carol Nguyen]]",
        },
        """\
# Half Marathon Training

Lisbon half marathon on 8 March, goal under 2 hours. Rules: [[Easy-run pacing rule]]. Result:
[[Lisbon half marathon result]].
""",
        thread="running",
    ),
    OtherSpec(
        "Projects/Book Club.md",
        {
            "type": "project",
            "aliases": ["Lindqvist book club"],
            "status": "active",
            "tags": ["project", "book-club"],
            "owner": "[[Carol Nguyen]]",
        },
        """\
# Book Club

Eight people, first Thursday of the month, formerly at [[Café Lindqvist]].

- Read: [[The Left Hand of Darkness]]
- Reading: [[Piranesi]]
- Shortlist: [[Sea of Tranquility]], Tomorrow, and Tomorrow, and Tomorrow
""",
        thread="book-club",
    ),
    OtherSpec(
        "Places/Chamonix.md",
        {"type": "place", "aliases": ["Chamonix-Mont-Blanc"], "tags": ["place"]},
        """\
# Chamonix

Town below Mont Blanc; ski areas Brévent-Flégère, Grands Montets, Les Houches. Reached from Lyon by
train through Geneva and Saint-Gervais. See [[Ski Trip to Chamonix]].
""",
    ),
    OtherSpec(
        "Books/The Left Hand of Darkness.md",
        {"type": "book", "author": "Ursula K. Le Guin", "aliases": ["LHoD"], "tags": ["book"]},
        """\
# The Left Hand of Darkness

Ursula K. Le Guin, about 300 pages. Discussed by the [[Book Club]]; the group saw Estraven as the
hero.
""",
    ),
    OtherSpec(
        "Books/Piranesi.md",
        {"type": "book", "author": "Susanna Clarke", "tags": ["book"]},
        """\
# Piranesi

Susanna Clarke, 245 pages. The [[Book Club]]'s pick after [[The Left Hand of Darkness]].
""",
    ),
)
"""The ordinary notes: people, projects, a place, books and the home page."""

APP_JSON: dict[str, Any] = {
    "alwaysUpdateLinks": True,
    "newFileLocation": "folder",
    "newFileFolderPath": "Inbox",
    "attachmentFolderPath": "Attachments",
    "userIgnoreFilters": [],
}
"""`.obsidian/app.json` of the demo vault."""
