"""Entity lists the shipped task sets are generated from (written for digirl, not taken from AitW).

Each pool is split into train and test entities by a stable hash of the entity
(:func:`split_pool`), so the test split only names entities never seen in training and adding an
entity to a list never moves the others. Pools in :data:`SHARED_POOLS` are closed vocabularies
(browser modes, times of day for the news) and are used by both splits.
"""

from __future__ import annotations

import hashlib

__all__ = [
    "APP_ALIASES",
    "KNOWN_APPS",
    "POOLS",
    "SHARED_POOLS",
    "SITE_NAMES",
    "SYSTEM_APP_LABELS",
    "TEST_FRACTION",
    "split_pool",
]

#: Share of each entity pool held out for the test split.
TEST_FRACTION = 0.4

_US_CITIES = """Albuquerque; Anchorage; Baltimore; Birmingham; Boise; Buffalo; Charlotte; Cincinnati;
Cleveland; Columbus; Des Moines; Detroit; El Paso; Fort Worth; Fresno; Honolulu; Indianapolis;
Jacksonville; Kansas City; Knoxville; Louisville; Madison; Memphis; Milwaukee; Minneapolis; Nashville;
New Orleans; Oakland; Oklahoma City; Omaha; Pittsburgh; Providence; Raleigh; Reno; Richmond; Rochester;
Salt Lake City; San Antonio; Savannah; Spokane; St. Louis; Tampa; Tucson; Tulsa; Wichita; Charleston;
Ann Arbor; Boulder; Santa Fe; Burlington"""

_WORLD_CITIES = """Amsterdam; Athens; Auckland; Bangkok; Barcelona; Berlin; Bogota; Brussels; Budapest;
Cairo; Cape Town; Copenhagen; Dubai; Dublin; Edinburgh; Florence; Hanoi; Havana; Istanbul; Jakarta;
Kyoto; Lagos; Lima; Lisbon; Madrid; Manila; Marrakech; Melbourne; Milan; Montreal; Munich; Nairobi;
Osaka; Oslo; Prague; Quito; Reykjavik; Rome; Santiago; Sao Paulo; Shanghai; Stockholm; Taipei; Tel Aviv;
Vancouver; Venice; Vienna; Warsaw; Wellington; Kuala Lumpur; Lyon; Krakow; Porto; Seville; Bruges;
Hamburg; Geneva; Perth; Brisbane; Calgary"""

_COUNTRIES = """Afghanistan; Albania; Algeria; Angola; Armenia; Australia; Austria; Azerbaijan; Belarus;
Belgium; Belize; Bhutan; Botswana; Bulgaria; Cameroon; Costa Rica; Croatia; Cuba; Cyprus; Denmark;
Egypt; El Salvador; Estonia; Ethiopia; Fiji; Finland; Georgia; Ghana; Greece; Guatemala; Haiti;
Honduras; Hungary; Iceland; Iran; Iraq; Ireland; Israel; Jordan; Kazakhstan; Kenya; Kuwait; Latvia;
Lebanon; Libya; Lithuania; Luxembourg; Madagascar; Mali; Malta; Mongolia; Morocco; Mozambique; Namibia;
New Zealand; Nicaragua; Niger; Nigeria; North Macedonia; Oman; Poland; Portugal; Qatar; Romania; Russia;
Rwanda; Saudi Arabia; Senegal; Serbia; Slovakia; Slovenia; Somalia; South Africa; Sudan; Syria;
Tanzania; Tunisia; Turkey; Uganda; Ukraine; Yemen; Zambia; Zimbabwe; the Netherlands; the Czech
Republic; the United Arab Emirates; the Ivory Coast"""

_NEWS_TOPICS = """artificial intelligence; climate science; renewable energy; electric cars; robotics;
quantum computing; cybersecurity; biotechnology; medicine; nutrition; archaeology; marine biology;
oceanography; geology; volcanology; genetics; neuroscience; particle physics; chemistry; education;
agriculture; aviation; architecture; fashion; video games; smartphones; cryptocurrency; semiconductors;
3D printing; wildlife conservation; paleontology; meteorology; mathematics; startups; virtual reality"""

_NEWS_SUBJECTS = """the housing market; interest rates; the job market; gas prices; the Olympics; the
World Cup; the Supreme Court; inflation; the NBA playoffs; the Mars rover; the election; the heat wave;
the stock market in Europe; the Federal Reserve; the tech industry; the airline industry; the auto
industry; wildfires in California; hurricane season; the Nobel Prize"""

_NEWS_WHEN = "today; this morning; this afternoon; this evening; this week; this weekend; this month; tonight"

_CUISINES = """Vietnamese; Ethiopian; Peruvian; Lebanese; Turkish; Spanish; Brazilian; Moroccan;
Caribbean; Cuban; Filipino; Malaysian; Nepalese; Polish; German; Russian; Argentinian; Hawaiian; Cajun;
Southern; dim sum; ramen; tapas; steak; vegan; noodle; dumpling; taco; falafel; pho; curry; breakfast;
brunch; bagel; donut"""

_MAPS_PLACES = """coffee shops; gas stations; pharmacies; bakeries; ice cream shops; bookstores; gyms;
parks; libraries; car washes; hardware stores; pet stores; florists; hair salons; laundromats; post
offices; bike shops; farmers markets; museums; movie theaters; bowling alleys; dog parks; playgrounds;
hiking trails; campgrounds; swimming pools; urgent care clinics; ATMs; parking garages; thrift stores;
toy stores; shoe stores; furniture stores; music stores; sporting goods stores; wine bars; juice bars;
tea houses; food trucks; barbecue places"""

_STORE_CHAINS = """Costco; Trader Joe's; Whole Foods; Kroger; Safeway; Publix; Aldi; CVS; Walgreens;
Rite Aid; Dollar Tree; Kohl's; Sears; Staples; Office Depot; PetSmart; Petco; GameStop; Barnes & Noble;
Dick's Sporting Goods; REI; Ulta; Sephora; Old Navy; Gap; Foot Locker; Bed Bath & Beyond; Wendy's; Taco
Bell; KFC; Dunkin'; Panera Bread; Pizza Hut; Domino's; Chick-fil-A; Shake Shack; Five Guys; Arby's;
Popeyes; Sonic; Jack in the Box; Dairy Queen; Panda Express; Wingstop; Jimmy John's; Tim Hortons; Krispy
Kreme; Cracker Barrel; Applebee's; Olive Garden; Walgreens Pharmacy; AutoZone; O'Reilly Auto Parts;
Jiffy Lube; FedEx Office; UPS Store; Hobby Lobby; Michaels"""

_RESTAURANT_CHAINS = """Applebee's; Arby's; Buffalo Wild Wings; Cracker Barrel; Dairy Queen; Dunkin';
Hardee's; Jack in the Box; Jersey Mike's; Jimmy John's; KFC; Little Caesars; LongHorn Steakhouse;
Outback Steakhouse; Panda Express; Popeyes; Qdoba; Raising Cane's; Red Robin; Ruby Tuesday; Shake Shack;
Sonic; Texas Roadhouse; TGI Fridays; Tim Hortons; Waffle House; Wendy's; Whataburger; White Castle;
Wingstop; Zaxby's; Culver's; Carl's Jr.; Bojangles; Checkers; El Pollo Loco; Firehouse Subs; Moe's;
Noodles & Company; P.F. Chang's; Potbelly; Sweetgreen; The Habit; Smashburger; Steak 'n Shake"""

_ARTISTS = """Adele; Billie Eilish; Dua Lipa; Harry Styles; Olivia Rodrigo; The Weeknd; Post Malone;
Doja Cat; Lizzo; Shawn Mendes; Camila Cabello; Charlie Puth; Sam Smith; Coldplay; Imagine Dragons; BTS;
Blackpink; Rihanna; Lady Gaga; Bad Bunny; J Balvin; Shakira; Karol G; Kendrick Lamar; Travis Scott;
Cardi B; Nicki Minaj; SZA; Khalid; Halsey; Sia; Lorde; Miley Cyrus; Jonas Brothers; Twenty One Pilots;
Arctic Monkeys; Foo Fighters; Green Day; Metallica; Paramore; Kacey Musgraves; Luke Combs; Morgan
Wallen; Carrie Underwood; Keith Urban; Hozier; Lewis Capaldi; Ellie Goulding; Zara Larsson; Rosalia"""

_CHANNELS = """CNN; Fox News; NBC News; ABC News; CBS News; Reuters; Bloomberg; The Guardian; Al Jazeera
English; Vox; Vice News; TED; National Geographic; NASA; Discovery; BuzzFeed; Vogue; Wired; The Verge;
Linus Tech Tips; Marques Brownlee; Unbox Therapy; Kurzgesagt; Veritasium; Vsauce; SmarterEveryDay; Mark
Rober; Tasty; Bon Appetit; Babish Culinary Universe; Polygon; Kotaku; PlayStation; Xbox; Nintendo;
Eurogamer; Digital Foundry; Rooster Teeth; ESPN; NFL; NBA; FIFA; Formula 1; WWE; Jimmy Kimmel Live; The
Tonight Show; Saturday Night Live; Late Night with Seth Meyers; The Late Show"""

_THIRD_PARTY_APPS = """Airbnb; Audible; Bumble; Canva; Cash App; Discord; DoorDash; Dropbox; Duolingo;
Etsy; Expedia; Fitbit; Grubhub; Hulu; Kindle; LinkedIn; Microsoft Teams; Microsoft Outlook; Nike Run
Club; Pinterest; PayPal; Peacock; Robinhood; Shazam; Signal; Skype; Slack; Snapchat; SoundCloud; Strava;
Telegram; TikTok; Tinder; Tripadvisor; Tumblr; Twitch; Venmo; Viber; Waze; WhatsApp; Wish; Zillow; Zoom;
Booking.com; Calm; Headspace; MyFitnessPal; Postmates; Instacart; Lime; Citymapper; Evernote; Todoist;
Trello; Notion; Flipboard; Quora; Vimeo; Deezer; Tidal; Crunchyroll; Disney+; HBO Max; Paramount+; Roku;
Sling TV; Pluto TV; Wattpad; Goodreads; OpenTable; Rover; Nextdoor; Redfin; Credit Karma; Mint;
Coinbase; Hopper; Kayak; Skyscanner; Lyft Driver"""

# (surface name as typed, launcher label) for the phone's own apps.
_SYSTEM_APPS = """calculator=Calculator; clock=Clock; camera=Camera; contacts=Contacts; gallery=Gallery;
settings=Settings; calendar=Calendar; play store=Play Store; music=Music; phone=Phone; files=Files;
messages=Messages; photos=Photos; Chrome=Chrome; Maps=Maps; YouTube=YouTube; downloads=Files;
SMS=Messages"""

_PRODUCTS_GENERAL = """Apple Watch; Google Pixel phone; PlayStation 5; Xbox Series X; Nintendo Switch;
Kindle Paperwhite; Roku streaming stick; Dyson vacuum; KitchenAid mixer; Instant Pot; GoPro camera;
Fitbit tracker; Bose headphones; Sonos speaker; Ring doorbell; Nest thermostat; Peloton bike; Vitamix
blender; Weber grill; Canon camera; Nikon camera; Surface laptop; Chromebook; Oculus headset; Garmin
watch; Keurig coffee maker; Ninja air fryer; Roomba vacuum; Yeti cooler; Traeger grill; Herman Miller
chair; Tesla Model 3; Honda Civic; Toyota Camry; DJI drone; iMac; Mac mini; AirPods Max; Galaxy tablet;
Echo Dot"""

_HARDWARE_ITEMS = """6 foot ladder; 50 ft garden hose; gallon of paint; box of nails; cordless drill;
bag of concrete; sheet of plywood; lawn mower; leaf blower; pressure washer; toolbox; circular saw;
wheelbarrow; water heater; ceiling fan; door lock; bathroom vanity; kitchen faucet; smoke detector;
space heater"""

_APPLIANCES = """washing machines; dishwashers; microwaves; air conditioners; dryers; freezers; ovens;
vacuum cleaners; grills; water filters; dehumidifiers; range hoods"""

_HOME_STORES = "Home Depot; Lowes; Best Buy; Costco; Walmart; Target; Menards; Ace Hardware; Sears; IKEA"

_BRANDS = """Apple; Sony; LG; Google; Microsoft; Dell; HP; Lenovo; Asus; Nike; Adidas; Canon; Nikon;
Dyson; Philips; Panasonic; Bose; JBL; Garmin; Nintendo; Xiaomi; OnePlus; Motorola; Huawei; Logitech;
Razer; Lego; Patagonia; Under Armour; Puma"""

_COSMETICS = """concealer; primer; setting spray; lip balm; face mask; moisturizer; sunscreen; serum;
toner; cleanser; body lotion; shampoo; conditioner; dry shampoo; hair oil; nail kit; makeup brush set;
eyebrow pencil; lip liner; face powder; cologne; hand cream; night cream; eye cream"""

_BEACH_ITEMS = """picnic basket; camping chair; hammock; sleeping bag; hiking backpack; water bottle;
rain jacket; yoga mat; cooler bag; sun hat; pair of sunglasses; swimsuit; snorkel set; paddle board;
kayak; tent; lantern; rain boots; winter coat; travel pillow"""

_DEVICES = "computer; desktop; laptop; phone; tablet; smartwatch; TV; iPad; monitor; Chromebook"

_WALLPAPER_KINDS = "wallpapers; backgrounds; screensavers; lock screen images"

_ANIMALS_OBJECTS = """horse; dolphin; eagle; falcon; ostrich; kangaroo; rabbit; greyhound; hummingbird;
sailfish; shark; zebra; elephant; gazelle; bear; wolf; penguin; whale; octopus; turtle; snail; sloth;
bee; dragonfly; motorcycle; bullet; helicopter; sailboat; submarine; tractor; race car; scooter;
electric bike; cruise ship; space shuttle; hot air balloon; glider; snowmobile; jet ski; tank; bus;
ferry; high speed train; golf ball"""

_BIG_THINGS = """an elephant; a polar bear; a hippo; a rhino; a gorilla; a moose; a crocodile; an
ostrich; an anaconda; a great white shark; a giant squid; a killer whale; Jupiter; Mars; Saturn; Venus;
Mercury; the Milky Way; Mount Everest; the Pacific Ocean; the Sahara desert; the Grand Canyon; Lake
Superior; the Amazon river; the Eiffel Tower; the Statue of Liberty; the Great Wall of China; a football
field; a basketball court; a tennis court"""

_ROLES_COUNTRIES = """president=Brazil; president=Mexico; president=Argentina; president=South Korea;
president=Germany; president=Italy; president=Ireland; president=Chile; president=Colombia;
president=Kenya; prime minister=Australia; prime minister=Japan; prime minister=India; prime
minister=Spain; prime minister=Sweden; prime minister=Norway; prime minister=New Zealand; prime
minister=Israel; prime minister=Greece; prime minister=Portugal; CEO=Google; CEO=Apple; CEO=Microsoft;
CEO=Amazon; CEO=Tesla; mayor=New York City; mayor=Chicago; mayor=London; mayor=Paris; mayor=Los Angeles"""

_CURRENCIES = """Argentine Peso; Chilean Peso; Colombian Peso; Czech Koruna; Danish Krone; Egyptian
Pound; Hong Kong Dollar; Hungarian Forint; Icelandic Krona; Indonesian Rupiah; Israeli Shekel; Kenyan
Shilling; Malaysian Ringgit; New Zealand Dollar; Nigerian Naira; Norwegian Krone; Pakistani Rupee;
Philippine Peso; Polish Zloty; Russian Ruble; Saudi Riyal; Singapore Dollar; South African Rand; Swedish
Krona; Thai Baht; Turkish Lira; UAE Dirham; Ukrainian Hryvnia; Vietnamese Dong; Taiwan Dollar"""

_TAB_PHRASES = """Chrome tab; Chrome window; Chrome incognito tab; Chrome incognito window; tab in
Chrome; window in Chrome; incognito tab in Chrome; incognito window in Chrome; private tab in Chrome;
private window in Chrome; tab in the chrome app; incognito tab in the chrome app; window in the chrome
app"""

_SITES = """wikipedia.org; cnn.com; espn.com; imdb.com; yahoo.com; github.com; stackoverflow.com;
nytimes.com; bbc.com; weather.com; craigslist.org; quora.com; medium.com; twitch.tv; nasa.gov; npr.org;
theverge.com; allrecipes.com; zillow.com; reddit.com; duolingo.com; khanacademy.org; archive.org;
booking.com"""

# Web Shopping search queries (lower-case, as typed into a store's search box).
_SHOP_PRODUCTS = """sony wh-1000xm4; sony wf-1000xm3; samsung galaxy buds; samsung galaxy s21; samsung
t7 ssd; hp spectre x360; hp envy 13; hp omen; microsoft surface pro; microsoft surface laptop;
steelseries arctis 7; steelseries apex pro; steelseries rival 3; hyperx cloud ii; hyperx alloy; anker
powercore; anker usb-c hub; kingston fury ram; crucial mx500; western digital my passport; seagate
barracuda; sandisk extreme; msi katana; msi optix; gigabyte aorus; samsung odyssey g7; benq zowie;
viewsonic monitor; lg gram; google pixel buds; google nest hub; amazon echo show; fire tv stick; roku
ultra; apple ipad air; apple watch se; apple magic keyboard; apple pencil; ipad mini; iphone 13 case;
otterbox defender; belkin charger; tp-link router; netgear nighthawk; eero mesh; ring doorbell; arlo
camera; wyze cam; nintendo switch oled; xbox wireless controller; ps5 dualsense; turtle beach stealth;
jabra elite 75t; skullcandy indy; sennheiser hd 450; audio-technica m50x; shure sm7b; blue yeti; elgato
stream deck; elgato hd60; logitech c920; logitech mx master 3; logitech k380; corsair vengeance; corsair
hs70; nzxt h510; cooler master hyper 212; evga supernova; amd ryzen 5; intel core i7; nvidia rtx 3060;
raspberry pi 4; arduino uno; kindle paperwhite; fitbit charge 5; garmin forerunner; gopro hero 9; dji
mini 2; canon eos rebel; nikon d3500; instax mini; ultimate ears boom 3; sonos one; marshall emberton;
hdmi cable; ethernet cable; aa batteries; 9 volt battery; surge protector; power strip; extension cord;
micro sd card; usb flash drive; wireless mouse; mechanical keyboard; laptop stand; monitor arm; webcam
cover; screen protector; phone tripod; ring light; desk lamp"""


# ---- phone task set (digirl/sim-phone-v0) ------------------------------------------------
_CONTACTS = """Alice; Bob; Carlos; Diana; Ethan; Fatima; Gabriel; Hannah; Ivan; Jasmine; Kenji; Laura; Mateo;
Nadia; Oliver; Priya; Quinn; Rosa; Samuel; Tara; Umar; Valentina; Wei; Ximena; Yusuf; Zoe; Mom; Dad;
Grandma; Grandpa; Maria Lopez; Tom Baker; Sarah Connor; James Lee; Anna Schmidt; Leo Rossi; Nina Park;
Omar Haddad; Lucy Chen; Marco Bianchi; Sofia Garcia; Daniel Kim; Ruth Cohen; Victor Hugo; Aisha Bello"""

_PHONE_NUMBERS = """555-201-3344; 555-867-5309; (415) 555-0142; 555 123 4567; 212-555-0198; 555-0100;
(646) 555-0175; 555-310-2020; 303 555 0117; 555-404-9090; 718-555-0133; 555-777-1212; (617) 555-0166;
555 909 4141; 512-555-0182; 555-246-8100; 206 555 0150; 555-313-2727; (702) 555-0149; 555-650-1000;
408-555-0127; 555-981-7654; 555 222 3333; 312-555-0181; 555-432-1098"""

_MESSAGE_BODIES = """I'm running late; see you at 7; happy birthday; call me when you can; dinner is ready;
I'll be home soon; the meeting moved to 3pm; can you pick up milk; thanks for today; good luck tomorrow;
I'm at the station; let's meet at the cafe; don't forget the tickets; I landed safely; the package
arrived; running 10 minutes late; see you at the gym; the game starts at 8; I got the job; are you
free tonight; bring an umbrella; the car is ready; I miss you; movie at 9 tonight; leaving work now;
lunch is on me; practice is cancelled; the doctor said I'm fine; grab some bread please; meet me outside"""

_TIMER_DURATIONS = """5 minutes; 10 minutes; 15 minutes; 20 minutes; 25 minutes; 28 minutes; 45 minutes; 1 hour;
2 hours; 90 seconds; 30 seconds; 45 seconds; 1 minute; 2 minutes; 3 minutes; 4 minutes; 6 minutes;
7 minutes; 8 minutes; 12 minutes; 40 minutes; 50 minutes; 1 minute 20 seconds; 2 minutes 30 seconds;
an hour and a half; half an hour; 1 hour 15 minutes; 3 hours; 18 minutes; 35 minutes; 55 minutes;
2 hours 30 minutes; 9 minutes; 11 minutes; 14 minutes"""

_EVENT_TITLES = """Dentist appointment; Team lunch; Yoga class; Book club; Parent-teacher meeting; Haircut;
Project review; Piano lesson; Coffee with Sam; Doctor visit; Soccer practice; Date night; Car service;
Budget meeting; Birthday party; Movie night; Job interview; Flight to Denver; Gym session; Vet
appointment; Team offsite; Study group; Farmers market; Language class; Tax appointment; Family dinner;
Board game night; Guitar lesson; Cooking class; Volunteer shift; Eye exam; Client call; Sprint
planning; Garden club; Hiking trip; Swim lesson; Wedding rehearsal; Art class; Quarterly review"""

_EVENT_WHEN = """on Friday at 3pm; tomorrow at noon; on Monday at 10am; on June 12; next Thursday; on Saturday
at 9am; on Wednesday at 6:30pm; tomorrow at 8am; on June 20 at 2pm; on Sunday; next Tuesday at 11am;
on June 28; today at 5pm; on Thursday at 7pm; next Monday; on June 15 at 4:30pm; on Friday; tomorrow;
on June 25 at 9:15am; next Friday at 1pm; on Tuesday at 2:30pm; on July 2 at 10am; on June 18; next
Wednesday at 8pm; on July 5"""

_VIDEO_QUERIES = """Bohemian Rhapsody; Shape of You; Despacito; lofi hip hop; how to tie a tie; Hotel California;
yoga for beginners; Never Gonna Give You Up; Uptown Funk; cat videos; how to make pancakes; Billie
Jean; Rolling in the Deep; jazz piano; rain sounds; Smells Like Teen Spirit; how to change a tire;
Gangnam Style; Sweet Child O Mine; 10 minute ab workout; Take On Me; Hey Jude; piano tutorial;
Wonderwall; how to knit; Thunderstruck; Bad Guy; Africa by Toto; how to fold a fitted sheet; Blinding
Lights; Dancing Queen; Stairway to Heaven; guitar lessons for beginners; Lose Yourself; classical
music for studying; Perfect by Ed Sheeran; origami crane tutorial; morning stretch routine"""

_PHOTO_SUBJECTS = """beach; dog; birthday; sunset; food; city; mountain; cat; flowers; friends; car; concert;
wedding; snow; garden; museum; lake; graduation; picnic; hiking"""

_EMAIL_ADDRESSES = """anna@example.com; john.smith@gmail.com; tom@work.com; li.wei@example.org; sales@acme.com;
maria.garcia@mail.com; support@shop.com; ben@startup.io; hr@company.com; jenny.cho@example.com;
k.nakamura@example.jp; team@club.org; dad@family.net; omar@example.com; lisa.brown@gmail.com;
prof.adams@university.edu; info@bakery.com; sam.taylor@example.com; ravi@example.in; noah@example.com"""

#: What people call the toggleable settings (closed vocabulary: the phone has these and no others).
PHONE_SETTING_WORDS = """Wi-Fi; WiFi; Bluetooth; airplane mode; flight mode; dark mode; dark theme; battery saver;
power saving mode; Do Not Disturb; location; location services; the flashlight; the torch; auto-rotate;
mobile data; the hotspot"""

_SETTINGS_PAGES = """battery; storage; display; sound; Wi-Fi; Bluetooth; notification; location; security; apps"""

_EMAIL_TOPICS = """the meeting tomorrow; the quarterly report; dinner on Saturday; the project deadline; my
vacation days; the invoice; the new schedule; the book club; the trip to Rome; the budget; the party;
the contract; the job offer; the lease renewal; the team photo; the bake sale; the concert tickets;
the weekly update; the conference; the presentation slides"""

# Apps whose everyday names differ from their launcher label (lower-case name → label).
#: Lower-case app names as people type them → launcher label (used by the parser).
APP_ALIASES = {
    "chrome": "Chrome",
    "google chrome": "Chrome",
    "chrome browser": "Chrome",
    "maps": "Maps",
    "google maps": "Maps",
    "youtube": "YouTube",
    "gmail": "Gmail",
    "email": "Gmail",
    "mail": "Gmail",
    "play store": "Play Store",
    "google play store": "Play Store",
    "google play": "Play Store",
    "photos": "Photos",
    "google photos": "Photos",
    "sms": "Messages",
    "messages": "Messages",
    "messaging": "Messages",
    "text messages": "Messages",
    "downloads": "Files",
    "files": "Files",
    "file manager": "Files",
    "settings": "Settings",
    "calculator": "Calculator",
    "calendar": "Calendar",
    "google calendar": "Calendar",
    "clock": "Clock",
    "alarm": "Clock",
    "camera": "Camera",
    "contacts": "Contacts",
    "gallery": "Gallery",
    "music": "Music",
    "phone": "Phone",
    "dialer": "Phone",
}
# Sites a person names without a domain ("Go to Reddit").
#: Site names people use without a domain → domain (used by the parser).
SITE_NAMES = {
    "reddit": "reddit.com",
    "wikipedia": "wikipedia.org",
    "cnn": "cnn.com",
    "espn": "espn.com",
    "imdb": "imdb.com",
    "yahoo": "yahoo.com",
    "bbc news": "bbc.com",
    "hacker news": "news.ycombinator.com",
    "github": "github.com",
    "stack overflow": "stackoverflow.com",
    "bbc": "bbc.com",
    "nytimes": "nytimes.com",
    "new york times": "nytimes.com",
    "the new york times": "nytimes.com",
}
#: Launcher labels of the phone's own apps (they cannot be uninstalled).
SYSTEM_APP_LABELS = frozenset(APP_ALIASES.values()) | {"Google"}


def _split(s: str, sep: str = ";") -> tuple[str, ...]:
    return tuple(x.strip() for x in s.replace("\n", " ").split(sep) if x.strip())


def _pairs(s: str) -> tuple[str, ...]:
    # "a=b" items stay as single strings; the generator splits them.
    return _split(s)


#: Every pool by name. Slot ``{name}`` (or ``{name2}``) in a template draws from ``POOLS[name]``.
POOLS: dict[str, tuple[str, ...]] = {
    "us_city": _split(_US_CITIES),
    "world_city": _split(_WORLD_CITIES),
    "country": _split(_COUNTRIES),
    "news_topic": _split(_NEWS_TOPICS),
    "news_subject": _split(_NEWS_SUBJECTS),
    "news_when": _split(_NEWS_WHEN),
    "cuisine": _split(_CUISINES),
    "maps_place": _split(_MAPS_PLACES),
    "store_chain": _split(_STORE_CHAINS),
    "restaurant_chain": _split(_RESTAURANT_CHAINS),
    "artist": _split(_ARTISTS),
    "channel": _split(_CHANNELS),
    "app": _split(_THIRD_PARTY_APPS),
    "system_app": _pairs(_SYSTEM_APPS),
    "product": _split(_PRODUCTS_GENERAL),
    "hardware_item": _split(_HARDWARE_ITEMS),
    "appliance": _split(_APPLIANCES),
    "home_store": _split(_HOME_STORES),
    "brand": _split(_BRANDS),
    "cosmetic": _split(_COSMETICS),
    "outdoor_item": _split(_BEACH_ITEMS),
    "device": _split(_DEVICES),
    "wallpaper_kind": _split(_WALLPAPER_KINDS),
    "moving_thing": _split(_ANIMALS_OBJECTS),
    "big_thing": _split(_BIG_THINGS),
    "role_place": _pairs(_ROLES_COUNTRIES),
    "currency": _split(_CURRENCIES),
    "site": _split(_SITES),
    "alarm_time": tuple(f"{h:02d}:{m:02d}" for h in range(24) for m in (0, 15, 30, 45)),
    "shop_product": _split(_SHOP_PRODUCTS),
    "bedrooms": ("1", "2", "3", "4"),
    "tab_phrase": _split(_TAB_PHRASES),
    "contact": _split(_CONTACTS),
    "phone_number": _split(_PHONE_NUMBERS),
    "message_body": _split(_MESSAGE_BODIES),
    "timer_duration": _split(_TIMER_DURATIONS),
    "event_title": _split(_EVENT_TITLES),
    "event_when": _split(_EVENT_WHEN),
    "video_query": _split(_VIDEO_QUERIES),
    "photo_subject": _split(_PHOTO_SUBJECTS),
    "email_address": _split(_EMAIL_ADDRESSES),
    "email_topic": _split(_EMAIL_TOPICS),
    # Closed vocabularies of the phone set (shared by both splits, see SHARED_POOLS).
    "setting_on": _split(PHONE_SETTING_WORDS),
    "setting_off": _split(PHONE_SETTING_WORDS),
    "level": ("25%", "50%", "75%", "max", "the minimum", "30 percent", "80%", "10%", "60%", "100%"),
    "level_dir": ("up", "down"),
    "settings_page": _split(_SETTINGS_PAGES),
    "stopwatch_phrase": ("Start the stopwatch", "Start a stopwatch", "Open the stopwatch and start it", "Start timing me"),
    "photo_phrase": (
        "Take a picture",
        "Take a photo",
        "Take a selfie",
        "Record a video",
        "Snap a photo",
        "Start recording a video",
    ),
    "latest_photo_phrase": ("Show me my latest photo", "Open the last picture I took", "Show my most recent photo"),
    "tabs_phrase": ("Close all tabs in Chrome", "Close all my tabs", "Close this tab", "Close the current Chrome tab"),
    "browser_page_phrase": (
        "Show my Chrome bookmarks",
        "Open my browsing history",
        "Show me my downloads in Chrome",
        "Open my bookmarks",
    ),
    "shade_phrase": (
        "Show me my notifications",
        "Open the notification panel",
        "Pull down the notification shade",
        "Check my notifications",
    ),
    "clear_phrase": ("Clear all notifications", "Dismiss all my notifications", "Clear my notifications"),
}

#: Lower-case app names people type without capitals ("open whatsapp") → how the app spells itself.
KNOWN_APPS: dict[str, str] = {
    **{a.lower(): a for a in _split(_THIRD_PARTY_APPS)},
    **{a.lower(): a for a in ("Facebook", "Instagram", "WhatsApp", "Spotify", "Netflix", "Amazon Shopping", "Twitter")},
    **{a.lower(): a for a in ("YouTube Music", "Google Drive", "Uber", "Lyft", "Snapchat", "Reddit", "Temu", "TikTok")},
    **APP_ALIASES,
}

#: Closed vocabularies used by both splits (not entities).
SHARED_POOLS = frozenset(
    {
        "news_when",
        "wallpaper_kind",
        "home_store",
        "bedrooms",
        "tab_phrase",
        "setting_on",
        "setting_off",
        "level",
        "level_dir",
        "settings_page",
        "stopwatch_phrase",
        "photo_phrase",
        "latest_photo_phrase",
        "tabs_phrase",
        "browser_page_phrase",
        "shade_phrase",
        "clear_phrase",
    }
)


def _in_test(value: str) -> bool:
    h = hashlib.sha256(value.lower().encode()).digest()
    return int.from_bytes(h[:4], "big") / 2**32 < TEST_FRACTION


def split_pool(name: str, split: str) -> tuple[str, ...]:
    """The entities of pool ``name`` used by ``split`` ("train", "test" or "validation")."""
    values = POOLS[name]
    if name in SHARED_POOLS:
        return values
    if split == "validation":  # its own entities (train/test are pinned, so it cannot take theirs)
        from digirl.sim.tasks.validation_entities import VALIDATION_POOLS

        return VALIDATION_POOLS[name]
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train', 'test' or 'validation', got {split!r}")
    want_test = split == "test"
    # Pairs ("downloads=Files") split by what they denote, so one app is never in both splits.
    return tuple(v for v in values if _in_test(v.split("=")[-1]) == want_test)
