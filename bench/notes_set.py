#!/usr/bin/env python3
"""Write the personal-notes evaluation set to bench/data/notes/ (deterministic).

    python bench/notes_set.py            # (re)writes corpus.jsonl, queries.jsonl, qrels.tsv
    python bench/notes_set.py --check    # regenerate in memory and fail if the files differ

The set is hand-written content (questions, answers, decoys, identifier notes and note
templates below) that a seeded generator assembles: it picks near-miss identifiers, fills
templates, dates the notes and shuffles them.  Same seed -> byte-identical files.

Two kinds of query:

* ``semantic``: a question with no identifier, paraphrased so that it shares few words
  with its answer note, while 2-4 DECOY notes share many of its words but not its meaning.
  The answer note has grade 2; a note that helps partly has grade 1.
* ``identifier``: a bare identifier (sometimes spaced differently from the notes, e.g.
  ``NO93 8601 1117 947`` for ``NO9386011117947``), or a question around one.  Grades come
  from a literal scan of the corpus (ignoring whitespace inside the identifier): for a bare
  identifier every note containing it has grade 2; for a question, the note that answers
  it has grade 2 and the other notes containing the identifier grade 1.  Hundreds of
  NEAR-MISS identifiers (``INV/2026/00038``, ``INV/2025/00037``, ``NO9386011117948``,
  ``OPS-1243`` ...) fill other notes, some of them answering the same question for the
  wrong identifier.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import pathlib
import random
import re
import string
import sys

SEED = 20260301
OUT = pathlib.Path(__file__).resolve().parent / "data" / "notes"

PEOPLE = ["Kari", "Ola", "Marte", "Priya", "Henrik", "Sofie", "Lars", "Ingrid"]
CLIENTS = ["Nordvik AS", "Bølge Studio", "Helix Labs", "Fjellstad Bygg", "Kvist & Co",
           "Tindra Media", "Havøy Fisk"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]

# --------------------------------------------------------------------------------------
# Semantic topics: question, answer (grade 2), partial answers (grade 1), decoys (grade 0).
# Decoys deliberately reuse the question's words; answers deliberately avoid them.
# --------------------------------------------------------------------------------------
TOPICS = [
    dict(slug="invoicing-policy", q="what did we decide about invoicing?",
         a="Invoicing, agreed with Kari: bills go out on the 1st of every month, net 30, and we only chase "
           "after 45 days. She will set up the template in Tripletex.",
         p=["Kari suggested monthly billing instead of per-project; we'll talk it over on Friday."],
         d=["Invoicing software demo was cancelled, we decide later whether we even need a new tool.",
            "Need to decide about the invoicing address for Havøy Fisk - they moved offices, ask what they want.",
            "Did we decide anything about invoicing the travel time? Nobody remembers, put it on the agenda."]),
    dict(slug="dentist-kids", q="when are the children seeing the dentist?",
         a="Dentist check-up for the children, Emma and Jonas, at Tannhelse Sagene: Tuesday 14 April, 15:30 and "
           "15:50, back to back. Leave school early.",
         d=["The dentist said my wisdom tooth can stay for now. Children's toothbrushes need replacing.",
            "Children seeing a film at Colosseum on Saturday, then pizza - dentist would not approve.",
            "When are the children's passports due? Check before the summer trip."]),
    dict(slug="vpn-laptop", q="how do I get the VPN working on the new laptop?",
         a="Work tunnel on the ThinkPad: import the WireGuard profile IT mailed, then switch off IPv6 on "
           "the wifi adapter - otherwise it connects but nothing loads.",
         d=["New laptop arrived today, working fine, still need a docking station and a bag.",
            "The VPN subscription for streaming went up to 89 kr a month. How do I cancel it?",
            "Getting the old laptop working again for Jonas: new battery ordered."]),
    dict(slug="airport-parking", q="where did we leave the car at the airport?",
         a="Airport: the car (the Toyota) is in long-term lot P10 at Gardermoen, row F, near the shuttle stop. Ticket photo in "
           "the glovebox.",
         d=["Airport parking prices are absurd, we should take the train next time we fly.",
            "The car needs a service before we drive to the airport in June - leave it at the garage Monday.",
            "Where did we leave the car charger? Not in the garage."]),
    dict(slug="cabin-wifi", q="what's the wifi password at the cabin?",
         a="Cabin wifi: the network is called Fjellro, the password is on the fridge magnet, all "
           "lowercase.",
         d=["Cabin wifi was down the whole weekend, the router probably needs replacing.",
            "Changed the password for the bank login, not the cabin one. Use the password manager.",
            "What's the password rule at work now? 16 characters and no reuse."]),
    dict(slug="friday-deploy", q="why did the deploy fail on friday?",
         a="Post-mortem of Friday's failed deploy: the migration locked the orders table for nine minutes, checkout "
           "timed out, we rolled back. Run migrations separately from now on.",
         p=["Rolled back the release at 16:40 after checkout errors spiked. Cause unknown yet."],
         d=["Friday deploy freeze starts next week - don't ship after 14:00 on a Friday.",
            "Why did we stop deploying on Fridays? Marte says it has been policy since 2024.",
            "Deploy of the marketing site did not fail, it was just slow. Friday was fine."]),
    dict(slug="mum-70", q="what present did we give mum for her 70th?",
         a="For mamma's 70th we went in together with my sister: a weekend at Holmenkollen hotel "
           "plus a photo book of the grandchildren.",
         d=["Present ideas for Jonas's birthday: lego, football boots, a bike bell.",
            "Mum asked what we want for our birthdays this year. Give her a list.",
            "Did we give the 70th birthday card to Per next door? It's on the hall table."]),
    dict(slug="plumber-cost", q="how much did the plumber charge?",
         a="The plumber from Oslo Rør fixed the leaking valve under the kitchen sink on Thursday, charged 3 450 kr "
           "including VAT, paid by Vipps.",
         d=["Plumbers charge double for weekend call-outs, so wait until Monday if it's not urgent.",
            "How much did we spend on the bathroom in total? Dig out all the receipts.",
            "Charge the electric bike overnight; the plumber blocked the garage socket."]),
    dict(slug="oncall-swap", q="who is covering my on-call shift next week?",
         a="On-call swap with Ola: he covers my shift and takes the pager 9-15 March, I take his week in April.",
         d=["The on-call shift handbook needs updating - who owns it now?",
            "Next week: cover letter for the grant application, and my shift at the school café.",
            "Who is covering the costs of the team dinner? Not my budget."]),
    dict(slug="pancakes", q="what's the recipe for the pancakes the kids like?",
         a="Pancakes the kids like (lapper): 3 eggs, 5 dl milk, 2.5 dl flour, a pinch of salt, melted butter; rest "
           "the batter half an hour.",
         d=["The kids like the new recipe app, but it is full of ads.",
            "Pancakes at the café were 120 kr each. Never again, the kids agreed.",
            "What's the recipe site Ingrid likes? The one with the Thai curry."]),
    dict(slug="passport-renewal", q="when does my passport need renewing?",
         a="My passport expires 02.09.2026 - book the police appointment at least eight weeks before the "
           "summer trip.",
         d=["The passport photo booth at Storo is broken, use the one at Oslo S.",
            "Renewing the car insurance: need to compare three quotes before the 1st.",
            "Does Jonas need a passport for Sweden? No, but bring ID."]),
    dict(slug="knee-gp", q="what did the doctor say about my knee?",
         a="GP visit: the swelling is most likely a meniscus strain. No running for four weeks, physio "
           "twice a week, MRI only if it doesn't improve.",
         d=["The doctor's office changed its booking system; say your birth number when you call.",
            "Knee pads for the kids' skating - what size did the doctor say? Ask the shop.",
            "Ingrid's doctor said the blood tests were fine."]),
    dict(slug="nas-restart", q="how do I restart the home server after a power cut?",
         a="Restarting the home server after an outage: the NAS doesn't come back on its own: hold the front button 3 s, wait for the "
           "blue LED, then `docker compose up -d` in /srv/stack.",
         d=["Power cut last night, the freezer defrosted and we lost the fish.",
            "The home server disk is 92% full - how do I clean up old snapshots?",
            "Restart the router after the power company's work on Tuesday."]),
    dict(slug="school-form", q="which school trip form still needs signing?",
         a="Jonas: the permission slip for the overnight school camp at Sognsvann has to be back by Friday - "
           "not signed yet.",
         d=["School photo order form: signed and returned.",
            "Trip to Bergen: sign the rental car form at pickup, needs the credit card holder.",
            "Form for the school trip fundraiser: we bake, Ingrid sells."]),
    dict(slug="lease-terms", q="what are the terms of the new apartment lease?",
         a="Rental contract for the Sagene flat: three years fixed, 16 500 a month, three months' "
           "deposit, three months' notice, pets allowed with approval.",
         d=["Apartment viewing on Grünerløkka was a disaster, and the agent's fee terms were outrageous.",
            "The lease on the company car ends in 2027 - new terms will be worse.",
            "New apartment for Lars: he asked what we paid for movers."]),
    dict(slug="heroku-move", q="why are we moving off Heroku?",
         a="Leaving Heroku: hosting costs tripled after the pricing change and customers need EU "
           "data residency. Target Hetzner plus managed Postgres by Q3.",
         d=["Heroku dyno restarted three times today, logs point at memory.",
            "Why are we moving the standup to 9:30? Priya's school run.",
            "Moving off the old Slack workspace: export done."]),
    dict(slug="nesodden-boat", q="what time does the ferry to Nesodden leave on weekends?",
         a="Boat from Aker brygge: Saturday and Sunday every 30 minutes from 07:15, last departure "
           "00:45. Takes 25 min.",
         d=["Weekends are fully booked until May - no more plans.",
            "Ferry tickets to Denmark: leave on 3 July, return 17 July, car included.",
            "What time does the party on Nesodden end? Need a babysitter."]),
    dict(slug="worker-leak", q="how did we fix the memory leak in the worker?",
         a="Image worker leak, root cause: the resize job kept PIL objects in a module-level cache. Wrapped it in an "
           "LRU of 64 and RSS is flat now.",
         d=["Worker memory graphs look weird again - did we fix the alert threshold?",
            "Memory of grandma's garden: we want to plant the same roses.",
            "How did we fix the leak in the bathroom ceiling last time? Ask the plumber."]),
    dict(slug="summer-plan", q="what's our plan for the summer holiday?",
         a="Summer holiday: two weeks in Lofoten in July - fly to Bodø on the 6th, ferry to Moskenes, cabin in Reine "
           "booked, home on the 20th.",
         d=["Holiday pay comes in June this year instead of May.",
            "Plan for the office summer party: Marte needs volunteers.",
            "What's our plan for the holiday gifts for teachers? 50 kr each from every family."]),
    dict(slug="washer-warranty", q="who do I contact about the broken washing machine?",
         a="Broken washing machine: the Miele is still under warranty, contact Elkjøp customer service, they send a technician; the "
           "receipt is in the email from October.",
         d=["Washing machine finished at 23:00 and I forgot to hang the clothes.",
            "Contact list for the school class is broken, emails bounce.",
            "Broken shelf in the laundry room - contact the landlord."]),
    dict(slug="q1-feedback", q="what did the customer complain about in the Q1 review?",
         a="Nordvik's complaints at the Q1 review: reports arrive late and the dashboard numbers "
           "don't match their ERP.",
         d=["Q1 review deck: customer logo slide needs an update.",
            "Complain to the landlord about the noise from the review of the building works.",
            "What did the customer survey say? Results come in Q2."]),
    dict(slug="db-creds", q="how do I rotate the database credentials?",
         a="Rotating the database credentials: mint a new role in Vault, update the secret in the cluster, roll the api "
           "deployment, revoke the old role after 24 h.",
         d=["Database credentials must never be pasted in Slack - Marte's reminder to everyone.",
            "Rotate the tyres on the car before winter.",
            "How do I get read access to the analytics database? Ask Ola."]),
    dict(slug="power-bill", q="why is the electricity bill so high this month?",
         a="High electricity bill explained: the bathroom floor heating is: stuck on max since the thermostat reset in "
           "January.",
         d=["Electricity bill paid with eFaktura this month.",
            "Why is this month so long? Payday can't come soon enough.",
            "The electricity company sends the bill on the 15th every month, high or low."]),
    dict(slug="laptop-emma", q="which laptop should I buy for Emma?",
         a="For Emma's schoolwork the school recommends a Chromebook with 8 GB under 5 000 kr; the Acer "
           "Spin looks best.",
         d=["Laptop bag for me: buy the grey one, not the black.",
            "Emma should buy her own bus card now that she's 12.",
            "Which laptop charger is mine? The one with the tape."]),
    dict(slug="expenses", q="what's the process for expense claims?",
         a="Expense claims: receipts go into Tripletex within 30 days: photograph them, tag the project code, Kari "
           "approves on Fridays.",
         d=["Claims that the new process is faster are nonsense.",
            "The expense of the Bergen trip was higher than expected.",
            "What's the process for booking the meeting room? Outlook, not Slack."]),
    dict(slug="football", q="when are the kids' football practices?",
         a="Football practices: Jonas trains Monday and Wednesday 17:30 at Voldsløkka, Emma Thursday 18:00. Bring water "
           "bottles.",
         d=["The kids' piano practices are going badly.",
            "Football World Cup final on Sunday - kids are allowed to stay up.",
            "When are the parent meetings? Both kids in the same week."]),
    dict(slug="api-tz", q="how do we handle time zones in the API?",
         a="Convention: store everything in UTC, accept ISO 8601 with an offset, render Europe/Oslo only "
           "in the frontend.",
         d=["The API rate limit is 100 requests per minute - raise it for Nordvik?",
            "Time zones for the team call: Priya is in Bangalore, so 10:00 Oslo.",
            "How do we handle API keys for the demo? One per client."]),
    dict(slug="mortgage", q="what did the bank say about the mortgage rate?",
         a="Call with the DNB adviser: the loan goes from 5.10 to 4.85 % from next term if we move the "
           "salary accounts over.",
         d=["The bank app update broke Face ID again.",
            "Mortgage calculator says we could afford more; the rate says no.",
            "What did the bank say about the lost card? New one in the post."]),
    dict(slug="car-rattle", q="why was the car making a noise?",
         a="Car noise: the workshop found the rattling came from a loose heat shield under the exhaust, tightened "
           "free of charge.",
         d=["The car seat for Jonas is too small now.",
            "Noise complaint from the downstairs neighbour about the party.",
            "Why was the car so dirty? Gravel road to the cabin."]),
    dict(slug="spare-key", q="where is the spare key for the house?",
         a="Extra front door key: one with Ingrid's parents, one in the lockbox by the shed.",
         d=["Key meeting for the house renovation moved to Tuesday.",
            "The spare tyre is in the garage, under the bikes.",
            "Where is the house insurance policy? In the blue folder."]),
    dict(slug="postgres-choice", q="what was the reasoning for choosing Postgres over MongoDB?",
         a="Why Postgres over MongoDB: we need joins across orders, invoices and customers plus real "
           "transactions; a document store was rejected.",
         d=["Choosing a MongoDB hosting plan for the side project - Atlas free tier.",
            "Postgres upgrade to 16 scheduled over the weekend.",
            "The reasoning in the MongoDB blog post is marketing."]),
    dict(slug="ingrid-sizes", q="what are Ingrid's shoe and clothing sizes?",
         a="For presents: Ingrid wears EU 39 in boots, M in tops, jeans 28/32.",
         d=["Shoe shop sale ends Sunday.",
            "Clothing donation bags to the Red Cross container.",
            "Ingrid's shoe rack broke, buy a new one at IKEA."]),
    dict(slug="fence-deal", q="what did we agree with the neighbours about the fence?",
         a="Neighbours Per and Sissel: instead of a fence we split a new boundary hedge 50/50, they pick the gardener, the work "
           "happens in May.",
         d=["Neighbours agree the street parking is a mess.",
            "Fence paint is peeling, buy stain.",
            "What did we agree about the neighbours' cat? Nothing yet."]),
    dict(slug="dishwasher", q="how long is the warranty on the dishwasher?",
         a="Dishwasher warranty: Bosch bought 12.11.2024 at Power: five-year complaint period under Norwegian consumer "
           "law, receipt in Drive/Receipts.",
         d=["Dishwasher is full, run it tonight.",
            "How long is the drive to the cabin? About 3 hours with a stop.",
            "The warranty on the phone screen ran out last month."]),
    dict(slug="app-release", q="what's blocking the mobile release?",
         a="App Store submission held up: Apple rejected the build because there is no account deletion "
           "flow. Ola is adding it.",
         d=["Mobile plan for Emma: 10 GB is enough.",
            "Release notes for the web app are drafted in Notion.",
            "What's blocking the drain? Hair, as usual."]),
    dict(slug="tax-return", q="when do we need to file the tax return?",
         a="Tax return (skattemelding) deadline 30 April; add the Airbnb income from the cabin under rental.",
         d=["The tax refund came back: 4 200 kr in June.",
            "When do we need to return the library books? Friday.",
            "File the return label for the jacket in the drawer."]),
    dict(slug="jonas-allergy", q="what medicine is Jonas allergic to?",
         a="Jonas reacted to penicillin (rash) in 2022 - tell every doctor; the alternative that worked "
           "was erythromycin.",
         d=["Jonas's allergy to cats seems better this year.",
            "Medicine cabinet needs clearing out, expired things to the pharmacy.",
            "Jonas is allergic to homework, according to Jonas."]),
    dict(slug="run-tests", q="how do I run the test suite locally?",
         a="`make test` needs the database container up first: `docker compose up -d db`, then "
           "`pytest -x -q`; set TZ=UTC or two tests fail.",
         d=["Test drive of the electric car on Saturday.",
            "The suite at the hotel in Bergen was lovely, ran late though.",
            "How do I run faster? Intervals, says Lars."]),
    dict(slug="gym-cancel", q="why did we cancel the gym membership?",
         a="Cancelled the gym: stopped SATS in January, barely used it at 699 a month; running outside and the kettlebell "
           "at home instead.",
         d=["Gym bag smells, wash it.",
            "Membership of the housing co-op: the annual meeting was so long.",
            "Why did we cancel the dinner with Lars? He was sick."]),
    dict(slug="wed-pickup", q="who is picking up the kids on wednesday?",
         a="Wednesdays: Ingrid's mum picks up Emma and Jonas from SFO, we get them at 18:00.",
         d=["Kids' Wednesday club is cancelled this week.",
            "Picking up the new sofa on Wednesday with the van.",
            "Who is picking the music for the party? The kids."]),
    dict(slug="perf-review", q="what feedback did I get in my performance review?",
         a="Performance review, year-end 1:1 with Marte: strong on delivery, needs to delegate more, push for the senior "
           "title next cycle.",
         d=["Review of the new restaurant: the feedback was mixed.",
            "Performance of the search endpoint is slow; review the indexes.",
            "What feedback did Emma get from her teacher? Good at maths."]),
    dict(slug="anniversary", q="where should we go for our anniversary dinner?",
         a="Anniversary dinner, ten years in June: Ingrid would love Maaemo if we can get a table, else Kontrast; book two "
           "months ahead.",
         d=["Anniversary of the company: 10 years, cake on Friday.",
            "Dinner for the kids: fish fingers, again.",
            "Where should we go for the team offsite? Priya suggests Hurdal."]),
    dict(slug="backup-plan", q="how are the family photos backed up?",
         a="Family photos are backed up like this: the phones sync to the NAS every night, and the NAS pushes an encrypted copy to "
           "Backblaze B2 on Sundays.",
         d=["Family photo session booked for May, backup date in June.",
            "The photos from the wedding are still on the old camera card.",
            "How are the family doing? Call grandma this week."]),
    # Questions with a rare word (a name, a place, a product) that the answer shares: here the
    # lexical channel should help, and dense is confused by notes on the same subject.
    dict(slug="sofie-building", q="how do I get into Sofie's building?",
         a="Sofie's place on Tåsen: the gate code is the year Emma was born plus a hash, third floor, "
           "bell says Lund.",
         d=["Our bike shed got a new code lock; the old one stopped working.",
            "Building entrance at the office: ask reception for a visitor card."]),
    dict(slug="tripletex-sync", q="what does Henrik want from the Tripletex integration?",
         a="Henrik's wishlist for the Tripletex sync: push invoices nightly, pull payments hourly, no more "
           "manual CSV.",
         d=["Accounting integration requirements from Marte: SSO and an audit log.",
            "The bank sync integration with the budget app keeps logging me out."]),
    dict(slug="hurdal-recap", q="how did the Hurdal offsite go?",
         a="Hurdal recap: great roadmap workshop, terrible food, everyone wants to go back in the autumn.",
         d=["The offsite at Sundvolden last year was a washout.",
            "Team day at the bowling alley went fine, Priya won."]),
    dict(slug="maths-teacher", q="who is Emma's maths teacher?",
         a="Emma's maths teacher is Ragnhild Moe; she prefers messages on Vigilo, not email.",
         d=["Jonas's class teacher is Mr. Berg, 3A.",
            "The school's new English teacher starts after the winter break."]),
    dict(slug="knausgard", q="where did I put the Knausgård book Ingrid lent me?",
         a="Ingrid's Knausgård is on the bedside table under the phone charger.",
         d=["Returned the library books on Friday, no fine.",
            "The novel from the book club is in the car door pocket."]),
]

# --------------------------------------------------------------------------------------
# Identifier families: the notes that contain the target identifiers (tag = answer note for
# a question query), the queries, and templates for near-miss notes.
# --------------------------------------------------------------------------------------
# Each family: targets (canonical, no spaces), display(canon, rng) -> how notes write it,
# alphabet for letter edits, target notes, near-miss templates ({a},{b},{c} = near misses).
FAMILIES = [
    dict(name="invoice", slug="invoice", targets=["INV/2026/00037", "INV/2026/00112", "INV/2025/00904"],
         extra=["INV/2026/00038", "INV/2025/00037", "INV/2024/00037", "INV/2026/00073", "INV/2026/00036",
                "INV/2026/00307", "INV/2026/00113", "INV/2026/00121", "INV/2026/00111", "INV/2025/00112",
                "INV/2025/00903", "INV/2025/00940", "INV/2026/00904"],
         notes=[
             ("invoice-sent", "Sent INV/2026/00037 to Nordvik AS, 18 750 kr ex. VAT, due 31 March.", None),
             ("invoice-dispute", "INV/2026/00037 is disputed - Kari is looking into it, don't chase them yet.", None),
             ("invoice-reminder", "Reminder sent on INV/2026/00037 and {a}; Nordvik says accounts payable is slow.", None),
             ("invoice-credit", "Nordvik pushed back on INV/2026/00037: the February workshop hours were billed "
                                "twice, so we owe them a credit note of 6 000 kr.", "inv37-why"),
             ("invoice-helix", "INV/2026/00112 issued to Helix Labs for the April retainer, 42 000 kr.", None),
             ("invoice-paid", "Payment for INV/2026/00112 landed on 14 May - closed in the ledger.", "inv112-paid"),
             ("invoice-old", "Found INV/2025/00904 in the archive: last year's Fjellstad job, paid in cash.", None),
         ],
         near=[
             "Why was {a} disputed? {client} said the VAT line was wrong - it wasn't, resolved by phone.",
             "{a} was disputed because the PO number was missing. Resent with PO.",
             "Sent {a} to {client}, {amt} ex. VAT, due {date}.",
             "Payment for {a} landed on {date}, {amt}. {b} still open.",
             "{a} is still unpaid - second reminder to {client}.",
             "Kari: credit note against {a}, and {b} reissued with the right hours.",
             "Purring sendt på {a} og {b}.",
             "Ledger check: {a}, {b} and {c} all paid; {client} wants one invoice a month from now on.",
             "Has {a} been paid? Checked the bank: yes, {amt}.",
             "Month-end: {a}, {b}, {c} and {d} sent; {client} asks for PDF copies.",
         ]),
    dict(name="iban", slug="bank", targets=["NO9386011117947", "NO6215035527913"],
         extra=["NO9386011117948", "NO9386011117974", "NO9386011117047", "NO9386011171947", "NO3986011117947",
                "NO9386011117941", "NO9368011117947", "NO6215035527931", "NO6215035527914", "NO6215053527913"],
         space_p=0.35,
         notes=[
             ("landlord-account", "Landlord's account for the deposit and rent: NO9386011117947 (Sagene flat, "
                                  "Mona Berg).", "iban-owner"),
             ("standing-order", "Set up the standing order of 16 500 kr to NO93 8601 1117 947 on the 1st.", None),
             ("kari-account", "Kari's new business account for the Bølge payouts: NO6215035527913.", None),
         ],
         near=[
             "Supplier account for {client}: {a}.",
             "Old account {a} is closed, payments go to {b} now.",
             "Mona (landlord) asked whether the deposit went to {a} - it did, on {date}.",
             "Standing order of {amt} to {a} stopped.",
             "Paid the cabin cleaning to {a}, {amt}.",
             "Kontonummer for {client}: {a}. Sjekk KID før betaling.",
             "Returned payment: wrong IBAN {a}, correct one is {b}?? Ask {person}.",
             "Whose account is {a}? Turned out to be {client}'s old one.",
             "Accounts in the payment list: {a}, {b}, {c}.",
         ]),
    dict(name="ssl", slug="ssl-error", targets=["ERR_SSL_PROTOCOL_ERROR"],
         pool=["ERR_SSL_VERSION_OR_CIPHER_MISMATCH", "ERR_CERT_COMMON_NAME_INVALID", "ERR_SSL_BAD_RECORD_MAC_ALERT",
               "ERR_HTTP2_PROTOCOL_ERROR", "ERR_QUIC_PROTOCOL_ERROR", "ERR_SPDY_PROTOCOL_ERROR",
               "ERR_SSL_UNRECOGNIZED_NAME_ALERT", "ERR_SSL_CLIENT_AUTH_CERT_NEEDED", "ERR_CERT_DATE_INVALID",
               "ERR_SSL_OBSOLETE_VERSION", "ERR_SSL_PROTOCOL_VERSION", "SSL_ERROR_PROTOCOL_VERSION_ALERT",
               "ERR_CONNECTION_RESET", "ERR_CERT_AUTHORITY_INVALID", "ERR_SSL_DECOMPRESSION_FAILURE_ALERT"],
         notes=[
             ("staging-ssl", "Chrome shows ERR_SSL_PROTOCOL_ERROR on staging again.", None),
             ("ssl-fix", "Fix for ERR_SSL_PROTOCOL_ERROR: the nginx vhost listened on 443 without ssl; added "
                         "`listen 443 ssl;` and reloaded.", "ssl-fix"),
             ("office-wifi", "Ola gets ERR_SSL_PROTOCOL_ERROR only on the office wifi - captive portal?", None),
         ],
         near=[
             "Fix for {a}: disabled http2 on the ingress and it went away.",
             "Chrome shows {a} on the Nordvik dashboard, Firefox is fine.",
             "How did we fix {a}? Renewed the cert and restarted nginx.",
             "{a} and {b} after the load balancer change - rolled back.",
             "Priya hit {a} from Bangalore; probably the corporate proxy.",
             "Staging: {a} again, fixed by clearing HSTS in chrome://net-internals.",
             "Browser errors this sprint: {a}, {b}, {c}, {d}.",
         ]),
    dict(name="heatpump", slug="heat-pump", targets=["E1102"],
         extra=["E1101", "E1120", "E1012", "E1103", "E11020", "E102", "E2102", "P1102", "E1112", "E1202",
                "E1100", "E0112"],
         notes=[
             ("heatpump-e", "Heat pump display shows E1102 again this morning, house is cold.", None),
             ("heatpump-meaning", "E1102 on the Mitsubishi = outdoor unit defrost sensor fault. Installer: reset "
                                  "the breaker; if it returns, replace the sensor under warranty.", "e1102-meaning"),
         ],
         near=[
             "Heat pump showed {a} overnight - fan icon blinking.",
             "{a} on the heat pump means the filter needs cleaning, per the manual.",
             "Varmepumpa viser {a}, ring installatøren.",
             "Dishwasher error {a}: water inlet. Cleaned the filter.",
             "What does {a} mean on the heat pump? Manual p. 34: communication error indoor/outdoor.",
             "Codes seen this winter: {a}, {b}, {c}.",
         ]),
    dict(name="ops", slug="ops-ticket", targets=["OPS-1234", "OPS-877"],
         extra=["OPS-1243", "OPS-1235", "OPS-1233", "OPS-1324", "OPS-12340", "OPS-123", "DEV-1234", "SUP-1234",
                "OPS-2134", "OPS-1334", "OPS-887", "OPS-878", "OPS-778", "OPS-8770"],
         notes=[
             ("ops-open", "OPS-1234 opened: disk pressure on db-2.", None),
             ("ops-closed", "OPS-1234 closed - resized the volume to 500 GB and added an alert at 80%.", "ops-resolved"),
             ("ops-weekly", "Mentioned OPS-1234 in the weekly; Marte wants a post-mortem.", None),
             ("ops-877", "OPS-877: cron on the billing box runs twice after DST. Henrik owns it.", None),
         ],
         near=[
             "{a} closed - restarted the worker pool.",
             "{a} opened: disk pressure on db-1.",
             "How was {a} resolved? Rolled back the config, see {b}.",
             "Standup: {a} and {b} are blocked on {person}.",
             "{a} is a duplicate of {b}.",
             "Triage: {a}, {b}, {c} - all low priority.",
             "Post-mortem for {a} scheduled Thursday.",
             "Sprint board: {a}, {b}, {c}, {d} in progress.",
         ]),
    dict(name="version", slug="release", targets=["v2.14.3"],
         extra=["v2.14.2", "v2.14.4", "v2.13.4", "v2.4.13", "v2.14.30", "v2.41.3", "v3.14.3", "v2.14.3-rc1",
                "v2.15.3", "v1.14.3", "v2.14.1", "v2.13.3"],
         notes=[
             ("release-prod", "Released v2.14.3 to production at 14:10.", None),
             ("release-bug", "v2.14.3 broke the CSV export for Bølge - the date column came out in US format. "
                             "Hotfix in v2.14.4.", "v2143-broke"),
         ],
         near=[
             "Released {a} to production at {time}.",
             "{a} broke login for SSO users - reverted to {b}.",
             "What broke in {a}? The PDF footer. Fixed in {b}.",
             "Changelog for {a}: faster search, new export button.",
             "Tagged {a} and {b}; {c} is next.",
             "Support matrix: {a}, {b} and {c} still supported, {d} dropped.",
         ]),
    dict(name="sha", slug="bisect", targets=["9f3c2e1"], hexlow=True,
         extra=["9f3c2e7", "9f3c21e", "9f3e2c1", "9f3c2e1a", "9f3c3e1", "8f3c2e1", "9f3d2e1", "9fc32e1"],
         notes=[
             ("bisect-flaky", "Bisected the flaky export test to commit 9f3c2e1 (Ola's refactor of the date "
                              "parser).", None),
         ],
         near=[
             "Reverted {a}, it broke the migrations.",
             "Cherry-picked {a} and {b} onto the release branch.",
             "Bisect points at {a}, but it only touches docs?",
             "Release branch contains {a}, {b}, {c}.",
         ]),
    dict(name="order", slug="order", targets=["404-7719302-1183562"],
         extra=["404-7719302-1183526", "404-7719320-1183562", "403-7719302-1183562", "404-7719302-1183563",
                "404-7791302-1183562"],
         notes=[
             ("order-chromebook", "Ordered the Chromebook for Emma, order 404-7719302-1183562, delivery "
                                  "Thursday.", None),
             ("order-return", "Returned the charger from order 404-7719302-1183562; refund of 349 kr promised "
                              "within 5 days.", "order-return"),
         ],
         near=[
             "Order {a}: the kettle, arrives Monday.",
             "Returned the shoes from order {a}, refund came on {date}.",
             "Order {a} cancelled, re-ordered as {b}.",
             "Open orders: {a}, {b}, {c}.",
         ]),
    dict(name="pnr", slug="flights", targets=["K7QZ2M"],
         extra=["K7QZ2N", "K7ZQ2M", "K7QZ3M", "X7QZ2M", "K7QZ2MA", "K1QZ2M", "KQ7Z2M"],
         notes=[
             ("lofoten-flights", "Lofoten flights booked, booking ref K7QZ2M (SAS): seats 14A-14D, all four "
                                 "together.", "pnr-seats"),
             ("checkin", "Checked in on K7QZ2M, bags prepaid.", None),
         ],
         near=[
             "Booking ref {a} (Norwegian), seats 22C and 22D.",
             "Hotel in Bodø, confirmation {a}.",
             "Rental car pick-up, reference {a}; the flight ref is {b}.",
             "Old booking refs from the Bergen trip: {a}, {b}, {c}.",
         ]),
    dict(name="flight", slug="flight", targets=["SK4035"],
         extra=["SK4053", "SK4305", "SK4036", "DY4035", "SK435", "SK40350", "SK4034", "WF4035"],
         notes=[
             ("flight-bodo", "SK4035 Oslo-Bodø leaves 07:25 on 6 July from gate D, be there by 06:30.", "sk-when"),
             ("flight-delay", "SK4035 was 40 min late last time, per the SAS app.", None),
         ],
         near=[
             "{a} Bodø-Oslo, 18:40 on {date}.",
             "Kari is on {a} tomorrow morning.",
             "When does {a} leave? 09:10, gate C.",
             "Flights that day: {a}, {b}, {c}.",
         ]),
    dict(name="plate", slug="car", targets=["EL48213"],
         extra=["EL48231", "EK48213", "EL48218", "EV48213", "EL84213", "EL48212", "EL4821", "EL482130"],
         display="plate",
         notes=[
             ("car-plate", "Our car is EL 48213 - needed for the Autopass agreement.", None),
             ("toll-bill", "Toll bill for EL 48213: 1 240 kr in March, mostly the Nesodden trips.", None),
         ],
         near=[
             "Visitor parking permit for {a} (Ingrid's parents).",
             "Parking fine on {a}, not ours - returned it.",
             "Neighbour's car {a} blocks the garage again.",
             "Cars in the shared garage: {a}, {b}, {c}.",
         ]),
    dict(name="tracking", slug="parcel", targets=["LA482913605NO"],
         extra=["LA482913650NO", "LA482931605NO", "LB482913605NO", "LA482913605SE", "LA482913606NO",
                "LA428913605NO"],
         notes=[
             ("parcel-posten", "Posten parcel LA482913605NO (the heat pump sensor) is at the Kiwi pickup point.",
              None),
         ],
         near=[
             "Tracking {a}: stuck in Oslo terminal since {date}.",
             "Parcel {a} picked up, {b} still in transit.",
             "Pakker denne uka: {a}, {b}, {c}.",
         ]),
    dict(name="ip", slug="infra", targets=["10.0.12.37"],
         extra=["10.0.12.73", "10.0.21.37", "10.0.12.3", "10.0.12.38", "10.1.12.37", "10.0.12.137",
                "10.0.12.36", "10.0.1.237"],
         notes=[
             ("db2-host", "db-2 lives at 10.0.12.37 after the network move; update the pgbouncer config.",
              "ip-host"),
             ("firewall", "Firewall rule opened for 10.0.12.37 port 5432 from the api subnet only.", None),
         ],
         near=[
             "db-1 is {a}, the replica is {b}.",
             "Which host is {a}? The old Jenkins box, decommissioned.",
             "Blocked {a} at the firewall - scanning the network.",
             "Grafana moved to {a}.",
             "Hosts to patch: {a}, {b}, {c}, {d}.",
         ]),
    dict(name="cve", slug="security", targets=["CVE-2024-3094"],
         extra=["CVE-2024-3049", "CVE-2023-3094", "CVE-2024-30940", "CVE-2024-3095", "CVE-2024-33094",
                "CVE-2024-3904"],
         notes=[
             ("xz-check", "Checked every box for CVE-2024-3094 (xz backdoor): none had xz 5.6.x.", None),
         ],
         near=[
             "Patched {a} in the base image.",
             "{a} does not affect us - no such package.",
             "Dependabot: {a} and {b} in the frontend deps.",
             "Security review checklist: {a}, {b}, {c}.",
         ]),
    dict(name="mac", slug="network", targets=["3C:22:FB:7A:10:9E"], hexup=True,
         extra=["3C:22:FB:7A:10:9F", "3C:22:FB:7A:01:9E", "3C:22:BF:7A:10:9E", "3C:22:FB:A7:10:9E"],
         notes=[
             ("printer-mac", "Printer reserved in DHCP by MAC 3C:22:FB:7A:10:9E -> 192.168.1.40.", None),
         ],
         near=[
             "Emma's tablet MAC {a}, blocked after 21:00.",
             "Unknown device {a} on the guest network.",
             "DHCP leases: {a}, {b}, {c}.",
         ]),
    dict(name="sqlstate", slug="postgres", targets=["40P01"],
         extra=["40001", "40P10", "42P01", "42P10", "4OP01", "40P02", "23505"],
         notes=[
             ("nightly-40p01", "Nightly job logged SQLSTATE 40P01 twice this week.", None),
             ("deadlock-cause", "40P01 explained: the nightly job and the invoice sync update customers and "
                                "orders in opposite order - deadlock. Fix: lock customers first.", "40p01-why"),
         ],
         near=[
             "Import failed with {a}: the table was renamed.",
             "Why do we get {a} in the nightly job? Serialization failure - retry loop added.",
             "Alert on {a} in the sync service, {b} in the api.",
             "Error codes in last night's log: {a}, {b}, {c}.",
         ]),
    dict(name="node", slug="tooling", targets=["20.11.1"],
         extra=["20.11.0", "20.1.11", "21.11.1", "20.11.10", "20.12.1", "18.11.1", "22.11.1"],
         notes=[
             ("node-pin", "Pinned node 20.11.1 in .nvmrc: 20.12 breaks the sharp build on the CI runners.",
              "node-why"),
             ("node-ci", "CI image updated to node 20.11.1, cache rebuilt.", None),
         ],
         near=[
             "Upgraded node to {a} locally, tests pass.",
             "Why did we pin node {a}? Old note, no longer true.",
             "Renovate wants to bump node from {a} to {b}.",
             "Node versions across repos: {a}, {b}, {c}.",
         ]),
]

# Identifier queries: (text, canonical id, answer tag or None for a bare identifier).
ID_QUERIES = [
    ("INV/2026/00037", "INV/2026/00037", None),
    ("why was INV/2026/00037 disputed?", "INV/2026/00037", "inv37-why"),
    ("INV/2026/00112", "INV/2026/00112", None),
    ("has INV/2026/00112 been paid?", "INV/2026/00112", "inv112-paid"),
    ("INV/2025/00904", "INV/2025/00904", None),
    ("NO9386011117947", "NO9386011117947", None),
    ("NO93 8601 1117 947", "NO9386011117947", None),
    ("whose account is NO9386011117947?", "NO9386011117947", "iban-owner"),
    ("who owns NO93 8601 1117 947?", "NO9386011117947", "iban-owner"),
    ("NO6215035527913", "NO6215035527913", None),
    ("ERR_SSL_PROTOCOL_ERROR", "ERR_SSL_PROTOCOL_ERROR", None),
    ("how did we fix ERR_SSL_PROTOCOL_ERROR?", "ERR_SSL_PROTOCOL_ERROR", "ssl-fix"),
    ("E1102", "E1102", None),
    ("what does E1102 mean on the heat pump?", "E1102", "e1102-meaning"),
    ("OPS-1234", "OPS-1234", None),
    ("OPS 1234", "OPS-1234", None),
    ("how was OPS-1234 resolved?", "OPS-1234", "ops-resolved"),
    ("OPS-877", "OPS-877", None),
    ("v2.14.3", "v2.14.3", None),
    ("what broke in v2.14.3?", "v2.14.3", "v2143-broke"),
    ("9f3c2e1", "9f3c2e1", None),
    ("404-7719302-1183562", "404-7719302-1183562", None),
    ("was order 404-7719302-1183562 refunded?", "404-7719302-1183562", "order-return"),
    ("K7QZ2M", "K7QZ2M", None),
    ("which seats do we have on booking K7QZ2M?", "K7QZ2M", "pnr-seats"),
    ("SK4035", "SK4035", None),
    ("SK 4035", "SK4035", None),
    ("when does SK4035 leave?", "SK4035", "sk-when"),
    ("EL48213", "EL48213", None),
    ("EL 48213", "EL48213", None),
    ("LA482913605NO", "LA482913605NO", None),
    ("LA 482 913 605 NO", "LA482913605NO", None),
    ("10.0.12.37", "10.0.12.37", None),
    ("which host is 10.0.12.37?", "10.0.12.37", "ip-host"),
    ("CVE-2024-3094", "CVE-2024-3094", None),
    ("3C:22:FB:7A:10:9E", "3C:22:FB:7A:10:9E", None),
    ("40P01", "40P01", None),
    ("why do we get 40P01 in the nightly job?", "40P01", "40p01-why"),
    ("20.11.1", "20.11.1", None),
    ("why did we pin node 20.11.1?", "20.11.1", "node-why"),
]

# Everyday notes with no query of their own: they widen the vocabulary.
FILLER = [
    ("groceries", "Handleliste: melk, brød, egg, kaffe, bananer, taco-krydder."),
    ("groceries", "Shopping: oat milk, rye bread, salmon for Friday, birthday candles."),
    ("reading", "Reading list: 'Designing Data-Intensive Applications' ch. 7, then the Knausgård Ingrid lent me."),
    ("idea", "Idea: a small script that renames scanned receipts by date and amount."),
    ("quote", "\"Make it work, make it right, make it fast.\" Still true."),
    ("workout", "Ran 7.2 km around Sognsvann, 38 minutes, knee felt okay."),
    ("dugnad", "Dugnad i borettslaget lørdag kl. 10 - vi tar ansvar for kaffe og boller."),
    ("weekend", "Helgeplan: lørdag bursdag hos Sofie, søndag tur til Vettakollen hvis det er fint."),
    ("podcast", "Podcast tip from Lars: the episode about SQLite's testing is excellent."),
    ("garden", "Planted tomatoes and basil on the balcony; water every evening in May."),
    ("movie", "Films to watch with the kids: Paddington 2, My Neighbour Totoro, Wall-E."),
    ("meeting-notes", "Weekly with Marte: hiring the second backend dev, interviews in two weeks."),
    ("meeting-notes", "Standup: Ola on the search rewrite, Priya on the mobile onboarding, me on billing."),
    ("snippet", "Useful: `git log --oneline --graph --all` and `git worktree add ../hotfix main`."),
    ("snippet", "SQLite: `PRAGMA journal_mode=WAL;` plus `PRAGMA synchronous=NORMAL;` for the local cache."),
    ("snippet", "Python: `python -X importtime -c 'import app' 2> imports.txt` to find slow imports."),
    ("recipe", "Taco night: kjøttdeig, mais, paprika, rømme, salsa. Emma wants guacamole."),
    ("birthday", "Sofie's birthday is 3 October - she likes board games and dark chocolate."),
    ("car", "Winter tyres on by 1 November; the tyre hotel at Mekonomen has them."),
    ("idea", "Write a blog post about hybrid search for personal notes."),
    ("school", "Foreldremøte 5B tirsdag kl. 18:00 - tema er mobilbruk."),
    ("health", "Flu jab for Ingrid and me at the pharmacy on Thursday, walk-in."),
    ("budget", "Budget: food 9 000, transport 2 500, kids' activities 1 800, savings 5 000 per month."),
    ("trip", "Bergen weekend: Fløibanen, fish market, rain gear for everyone."),
]


# --------------------------------------------------------------------------------------
def fill(rng: random.Random, template: str, ids: list[str]) -> str:
    a, b, c, d = (ids * 4)[:4]
    return template.format(
        a=a, b=b, c=c, d=d,
        client=rng.choice(CLIENTS), person=rng.choice(PEOPLE),
        amt=f"{rng.randint(2, 95)} {rng.randint(0, 9)}{rng.choice(['00', '50', '75'])} kr",
        date=f"{rng.randint(1, 28)} {rng.choice(MONTHS)}",
        time=f"{rng.randint(8, 17)}:{rng.choice(['00', '10', '25', '40', '55'])}",
    )


STOP = {"the", "a", "an", "my", "our", "for", "of", "to", "on", "in", "at", "is", "was", "we", "i",
        "and", "with", "did", "do", "how", "what", "why", "who", "when", "where", "which", "need", "new"}


def slugify(text: str, words: int = 3) -> str:
    """A file-name slug from a note's first few content words, as a person might name it."""
    toks = [w for w in re.findall(r"[a-z0-9æøå]+", text.lower()) if w not in STOP and len(w) > 1]
    return "-".join(toks[:words]) or "note"


def mutate(canon: str, rng: random.Random, fam: dict) -> str:
    """One plausible typo-distance variant of an identifier (digit change, swap, letter change)."""
    c = list(canon)
    pos = [i for i, ch in enumerate(c) if ch.isalnum()]
    i = rng.choice(pos[-4:]) if rng.random() < 0.6 else rng.choice(pos)
    op = rng.random()
    if op < 0.55 and c[i].isdigit():
        c[i] = rng.choice([d for d in string.digits if d != c[i]])
    elif op < 0.85:
        j = pos[pos.index(i) - 1] if pos.index(i) > 0 else pos[1]
        c[i], c[j] = c[j], c[i]
    elif c[i].isalpha():
        letters = "abcdef" if fam.get("hexlow") else "ABCDEF" if fam.get("hexup") else string.ascii_uppercase
        c[i] = rng.choice([x for x in letters if x != c[i]])
    else:
        c.insert(i + 1, rng.choice(string.digits))
    return "".join(c)


def display(canon: str, fam: dict, rng: random.Random) -> str:
    if fam.get("display") == "plate":
        return canon[:2] + " " + canon[2:]
    if fam.get("space_p") and rng.random() < fam["space_p"]:
        return " ".join(canon[i:i + 4] for i in range(0, len(canon), 4))
    return canon


def id_pattern(canon: str) -> re.Pattern:
    """Literal identifier, any whitespace inside it ignored, not part of a longer identifier."""
    body = r"\s?".join(re.escape(ch) for ch in canon)
    return re.compile(r"(?<![A-Za-z0-9])(?<![A-Za-z0-9][./_:#-])" + body +
                      r"(?![A-Za-z0-9])(?![./_:#-][A-Za-z0-9])")


def build() -> tuple[list[dict], list[dict], list[tuple[str, str, int]]]:
    rng = random.Random(SEED)
    notes: list[dict] = []  # {slug, text, tag}

    # semantic topics
    for t in TOPICS:
        notes.append(dict(slug=slugify(t["a"]), text=t["a"], tag="sem:" + t["slug"]))
        for p in t.get("p", []):
            notes.append(dict(slug=slugify(p), text=p, tag="semp:" + t["slug"]))
        for d in t["d"]:
            notes.append(dict(slug=slugify(d), text=d, tag=None))

    # identifier families
    all_targets = [tg for f in FAMILIES for tg in f["targets"]]
    target_pats = {tg: id_pattern(tg) for tg in all_targets}
    n_near_mentions = 0
    for fam in FAMILIES:
        pool = set(fam.get("extra", [])) | set(fam.get("pool", []))
        if not fam.get("pool"):
            tries = 0
            while len(pool) < 14 + 8 * len(fam["targets"]) and tries < 5000:
                tries += 1
                pool.add(mutate(rng.choice(fam["targets"]), rng, fam))
        pool = sorted(x for x in pool if x not in all_targets
                      and not any(p.search(x) for p in target_pats.values()))
        for _slug, text, tag in fam["notes"]:
            ids = rng.sample(pool, 3)
            notes.append(dict(slug=fam["slug"],
                              text=text.format(a=display(ids[0], fam, rng)), tag=tag))
        # near-miss notes: every template at least once, then more at random
        n_notes = max(len(fam["near"]), 4 * len(fam["targets"]) + 4)
        multi = [t for t in fam["near"] if "{b}" in t]
        templates = list(fam["near"]) + [rng.choice(multi if multi and rng.random() < 0.5 else fam["near"])
                                         for _ in range(n_notes - len(fam["near"]))]
        for tmpl in templates:
            k = 1 + sum(x in tmpl for x in ("{b}", "{c}", "{d}"))
            ids = rng.sample(pool, k)
            n_near_mentions += k
            notes.append(dict(slug=fam["slug"], text=fill(rng, tmpl, [display(i, fam, rng) for i in ids]),
                              tag=None))

    for slug, text in FILLER:
        notes.append(dict(slug=slug, text=text, tag=None))

    # ids, dates, paths
    rng.shuffle(notes)
    start = dt.date(2025, 6, 1)
    dates = sorted(start + dt.timedelta(days=rng.randrange(365)) for _ in notes)
    corpus, seen = [], set()
    for i, (n, d) in enumerate(zip(notes, dates), 1):
        path = f"notes/{d.isoformat()}-{n['slug']}.md"
        j = 2
        while path in seen:
            path = f"notes/{d.isoformat()}-{n['slug']}-{j}.md"
            j += 1
        seen.add(path)
        n["_id"] = f"n{i:03d}"
        corpus.append({"_id": n["_id"], "path": path, "text": n["text"]})
    by_tag = {n["tag"]: n["_id"] for n in notes if n["tag"]}
    partial = {}
    for n in notes:
        if n["tag"] and n["tag"].startswith("semp:"):
            partial.setdefault(n["tag"][5:], []).append(n["_id"])

    queries, qrels = [], []
    qn = 0
    for t in TOPICS:
        qn += 1
        qid = f"q{qn:02d}"
        queries.append({"_id": qid, "text": t["q"], "kind": "semantic"})
        qrels.append((qid, by_tag["sem:" + t["slug"]], 2))
        for cid in partial.get(t["slug"], []):
            qrels.append((qid, cid, 1))
    for text, canon, tag in ID_QUERIES:
        qn += 1
        qid = f"q{qn:02d}"
        queries.append({"_id": qid, "text": text, "kind": "identifier"})
        pat = id_pattern(canon)
        hits = [c["_id"] for c in corpus if pat.search(c["text"])]
        assert hits, canon
        if tag:
            assert by_tag[tag] in hits, (tag, canon)
            assert len(hits) > 1, canon  # the question must choose among several literal hits
        for cid in hits:
            qrels.append((qid, cid, 2 if tag is None or cid == by_tag[tag] else 1))
    build.stats = dict(notes=len(corpus), queries=len(queries), near_miss_mentions=n_near_mentions,
                       qrels=len(qrels))
    return corpus, queries, qrels


def render() -> dict[str, str]:
    corpus, queries, qrels = build()
    return {
        "corpus.jsonl": "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in corpus),
        "queries.jsonl": "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries),
        "qrels.tsv": "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{c}\t{s}\n" for q, c, s in qrels),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the files on disk differ")
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    args = ap.parse_args()
    files = render()
    if args.check:
        bad = [n for n, s in files.items() if not (args.out / n).exists()
               or (args.out / n).read_text(encoding="utf-8") != s]
        if bad:
            print("out of date:", ", ".join(bad), file=sys.stderr)
            return 1
        print("up to date", build.stats)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, s in files.items():
        (args.out / name).write_text(s, encoding="utf-8")
    print("wrote", args.out, build.stats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
