"""Entities of the validation split: written for it, named by no train or test line.

The train/test entities of :mod:`.entities` are split by a hash of each entity, and that split must
not move (the shipped train and test files are pinned), so the validation split cannot be carved
out of those pools. It gets its own entities instead: every non-shared pool has a list here, disjoint
from the pool (``tests/sim/test_sim_validation.py`` checks it, by what each entity denotes), so
recipes can be chosen on tasks that, like the test tasks, name only entities training never saw.
Closed vocabularies (:data:`~.entities.SHARED_POOLS`) are shared by all three splits.

``system_app`` is the one closed world among the entity pools: the phone has a fixed set of apps,
and every app the pool names is already in train or test; the validation split opens Gmail, the
one app the other splits never name.
"""

from __future__ import annotations

__all__ = ["VALIDATION_POOLS"]


def _items(s: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in s.replace("\n", " ").split(";") if x.strip())


_ALARM_TIMES = tuple(
    f"{h:02d}:{m:02d}"
    for h, m in (
        (5, 50), (6, 10), (6, 20), (6, 40), (6, 50), (7, 10), (7, 20), (7, 40), (7, 50), (8, 10), (8, 20),
        (8, 40), (9, 10), (9, 50), (10, 20), (10, 40), (11, 40), (13, 10), (14, 50), (17, 20), (18, 40),
        (20, 10), (21, 10), (22, 20),
    )
)  # fmt: skip

#: Validation entities of every non-shared pool of :data:`~.entities.POOLS`.
VALIDATION_POOLS: dict[str, tuple[str, ...]] = {
    "us_city": _items("""Austin; Denver; Sacramento; Lexington; Durham; Chattanooga; Little Rock; Baton Rouge;
        Greenville; Asheville; Tallahassee; Fort Collins"""),
    "world_city": _items("""Seoul; Mumbai; Helsinki; Zurich; Doha; Valencia; Nice; Salzburg; Cusco; Cartagena;
        Tbilisi; Ljubljana; Riga; Tallinn; Busan; Chiang Mai"""),
    "country": _items("""Bolivia; Paraguay; Ecuador; Panama; Jamaica; Sri Lanka; Bangladesh; Laos; Cambodia;
        Uzbekistan; Kyrgyzstan; Moldova; Montenegro; Eritrea; Malawi; Gabon; Togo; Benin; Samoa; Tonga"""),
    "news_topic": _items("""astronomy; space exploration; public health; ocean conservation; drones; solar power;
        microbiology; linguistics; urban planning; sleep science"""),
    "news_subject": _items("""the World Series; the Super Bowl; the Tour de France; the G7 summit; the Oscars;
        the stock market in Asia; the Wimbledon final; the teachers' strike"""),
    "cuisine": _items("Korean; Thai; Greek; Indian; sushi; seafood; Jamaican; Sichuan; Basque"),
    "maps_place": _items("""dentists; car dealerships; art galleries; skate parks; coworking spaces; yoga studios;
        nail salons; vet clinics; electronics stores; antique shops; climbing gyms; ice rinks"""),
    "store_chain": _items("""Lidl; Wegmans; Meijer; Marshalls; TJ Maxx; Big Lots; Chipotle; Starbucks; Subway;
        Burger King; In-N-Out; Sprouts"""),
    "restaurant_chain": _items("""Denny's; IHOP; Red Lobster; Chili's; The Cheesecake Factory; Bob Evans; Golden
        Corral; Del Taco; Church's Chicken; Portillo's; Krystal; Perkins"""),
    "artist": _items("""Taylor Swift; Beyonce; Drake; Bruno Mars; Ariana Grande; Justin Bieber; Katy Perry;
        Maroon 5; Eminem; Selena Gomez; Alicia Keys; Norah Jones"""),
    "channel": _items("""Sky News; PBS NewsHour; CNBC; Dude Perfect; MrBeast; Tom Scott; Numberphile;
        Computerphile; Gordon Ramsay; First We Feast; Yes Theory; Smithsonian Channel"""),
    "app": _items("""Feedly; Pocket; Libby; Pandora; iHeartRadio; Grammarly; Babbel; Memrise; AllTrails; Komoot;
        Splitwise; Letterboxd; Glovo; Bolt; Wise; Revolut; Vinted; Depop; Poshmark; Houzz"""),
    "system_app": ("gmail=Gmail", "email=Gmail", "mail=Gmail"),
    "product": _items("""Steam Deck; Meta Quest 3; Apple Vision Pro; Ford Mustang; Subaru Outback; Lenovo
        ThinkPad; Sony Walkman; Polaroid camera; Bosch dishwasher; SodaStream; Nespresso machine; Breville
        toaster; Theragun; Oura ring"""),
    "hardware_item": _items("""step stool; tape measure; stud finder; shop vac; paint roller; caulk gun; snow
        shovel; garden rake; hedge trimmer; sump pump"""),
    "appliance": _items("refrigerators; toasters; blenders; stoves; wine coolers; ice makers; air purifiers"),
    "brand": _items("""Samsung; Bosch; Nokia; Toshiba; Fujifilm; Casio; Sharp; Acer; New Balance; Reebok;
        Columbia; Yamaha"""),
    "cosmetic": _items("""mascara; lipstick; foundation; eyeliner; blush; bronzer; highlighter; perfume;
        deodorant; exfoliator; face wash; lip gloss"""),
    "outdoor_item": _items("""beach towel; beach umbrella; wetsuit; fishing rod; camping stove; headlamp; picnic
        blanket; folding table; surfboard; bike helmet"""),
    "device": _items("iPhone; Kindle; MacBook; Android tablet; Pixel phone; gaming PC"),
    "moving_thing": _items("""cheetah; lion; jaguar; swordfish; pronghorn; hare; mallard duck; tuna; camel;
        giraffe; bobsled; skateboard; canoe; monorail"""),
    "big_thing": _items("""a blue whale; a walrus; a bison; a Komodo dragon; Neptune; Uranus; the Sun; the Moon;
        Mount Kilimanjaro; Lake Victoria; the Nile river; the Empire State Building; Central Park; an
        Olympic swimming pool"""),
    "role_place": _items("""president=France; president=Peru; president=Uruguay; prime minister=Canada; prime
        minister=Thailand; prime minister=Malaysia; CEO=Netflix; CEO=Nvidia; CEO=Intel; mayor=Boston;
        mayor=Toronto"""),
    "currency": _items("""Japanese Yen; British Pound; Canadian Dollar; Swiss Franc; Mexican Peso; Brazilian
        Real; Indian Rupee; Chinese Yuan; South Korean Won; Australian Dollar; Jordanian Dinar"""),
    "site": _items("""goodreads.com; rottentomatoes.com; webmd.com; tripadvisor.com; wired.com; britannica.com;
        nationalgeographic.com; pbs.org"""),
    "alarm_time": _ALARM_TIMES,
    "shop_product": _items("""apple airpods pro; samsung galaxy tab s8; bose quietcomfort 45; jbl flip 5; beats
        studio buds; dell xps 13; asus rog strix; razer deathadder; keychron k2; samsung 980 pro; lg ultragear
        monitor; chromecast with google tv; nest wifi; philips hue bulbs; kasa smart plug; usb-c cable; hdmi
        switch; wireless charger; portable ssd; gaming chair; desk mat; noise cancelling headphones; bluetooth
        speaker; gaming headset"""),
    "contact": _items("""Adrian; Beatriz; Chen Li; Dmitri; Elena; Felix; Grace Wu; Hugo; Isla; Jonah; Keiko;
        Liam; Mei; Noor; Pablo Ruiz; Rahul; Sven; Theo"""),
    "phone_number": _items("""555-618-2200; (303) 555-0190; 555 741 8520; 919-555-0111; 555-350-6060;
        (808) 555-0123; 555-889-1010; 425 555 0170"""),
    "message_body": _items("""the train is delayed; save me a seat; happy anniversary; we won the game; call the
        plumber please; the kids are asleep; I'll bring dessert; meeting at noon tomorrow; check your email;
        traffic is terrible"""),
    "timer_duration": _items("""13 minutes; 16 minutes; 17 minutes; 19 minutes; 22 minutes; 26 minutes; 32
        minutes; 75 seconds; 4 hours; 1 hour 45 minutes; 2 minutes 15 seconds; 38 minutes"""),
    "event_title": _items("""Orthodontist appointment; Pottery class; Chess club; Recital; Oil change; Team
        retro; Baby shower; Open house; Karaoke night; Physio session; Career fair; Neighborhood cleanup"""),
    "event_when": _items("""on Saturday at 4pm; next Sunday at 10am; on July 9; on June 30 at 3:45pm; tomorrow
        at 7pm; on Monday at 1:30pm; next Saturday; on July 14 at 11am; today at 8pm; on Thursday"""),
    "video_query": _items("""Let It Be; Clair de Lune; how to juggle; how to tie a bowline knot; Viva la Vida;
        Mr. Brightside; Hallelujah; how to make sourdough bread; beginner salsa dance; ocean waves sounds;
        Moonlight Sonata; Here Comes the Sun"""),
    "photo_subject": _items("fireworks; bridge; forest; baby; cake; vacation; rainbow; zoo"),
    "email_address": _items("""chris@example.net; maya.patel@gmail.com; orders@store.com; coach@team.org;
        eli.cohen@example.com; nora@design.co; it@office.com; grandma@family.net"""),
    "email_topic": _items("""the soccer schedule; the rent payment; my flight itinerary; the science fair; the
        wedding plans; the quarterly taxes; the holiday party; the new hire; the course syllabus; the camping
        trip"""),
}
