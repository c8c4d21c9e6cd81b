/**
 * Words people use for the same thing a tool describes in other words, in
 * general English and in the vocabulary of APIs — not any one catalog's. A
 * query word also looks for the other words of its groups, at a fraction of
 * its weight. Groups are symmetric; `narrower → broader` lines expand one way
 * only (a question about euros is about currency, not every question about
 * currency about euros).
 */
const GROUPS = `
get fetch retrieve obtain
find search locate lookup seek
show display view present
list enumerate
create make add new generate
delete remove erase destroy unlink
update modify change edit alter
send post submit deliver dispatch
buy purchase order
book reserve reservation booking
cancel abort revoke
start begin launch run execute trigger invoke
stop halt terminate kill end
calculate compute calc determine
convert conversion transform
compare comparison diff
move rename relocate
copy duplicate clone
download fetch
upload
picture photo image pic photograph
video clip footage
movie film
song music track
car vehicle automobile auto
price cost fee charge fare
money currency cash funds
weather forecast climate
doctor physician
restaurant eatery diner
hotel lodging accommodation
flight airline airfare plane
trip travel journey
city town
country nation
email mail
message text sms chat
meeting appointment
schedule calendar agenda
folder directory dir
user account profile
password passcode
location place address
near nearby close closest nearest
stock share equity ticker
company business corporation firm
lawsuit litigation
recipe dish
news headline
job career employment vacancy
salary pay wage income
phone telephone mobile
sum total add plus
multiply product times
divide quotient
subtract minus difference
average mean
environment env
log logging
compress zip gzip archive
decompress unzip extract
website site webpage url
internet web online
repository repo
command shell terminal cli
program application app software
database db
chart graph plot diagram
map directions route navigation
colour color
favourite favorite
centre center
licence license
catalogue catalog
grey gray
metre meter
litre liter
organise organize
analyse analyze
font typeface typography
slide presentation deck
test check verify validate
fix repair
summary summarize overview
explain describe explanation
remind reminder alert notify notification
info information detail details metadata
statistics stats
rating review
recommend suggest recommendation
audio sound voice speech
transcribe transcription
rent rental lease hire
cheap inexpensive affordable
toggle enable disable switch activate deactivate
save store write
size big large
old age
tall height
heavy weight
fast speed velocity quick
illness disease sickness
medicine medication drug
hospital clinic
exercise workout fitness
calorie nutrition nutritional
food meal
kid child children
house home
`;

const NARROWER = `
dollar euro yen pound rupee yuan peso franc usd eur gbp jpy cad aud inr cny → currency money
rain snow sunny cloudy humidity precipitation wind → weather forecast
kilometer kilometre mile meter metre feet foot inch yard celsius fahrenheit kelvin kilogram gram ounce litre liter gallon → unit
monday tuesday wednesday thursday friday saturday sunday tomorrow yesterday today → date day
`;

/** Each word's related words, unstemmed. */
export function synonymEntries(): Map<string, Set<string>> {
  const related = new Map<string, Set<string>>();
  const relate = (word: string, other: string): void => {
    if (word === other) return;
    let set = related.get(word);
    if (set === undefined) related.set(word, (set = new Set()));
    set.add(other);
  };
  for (const line of GROUPS.split('\n')) {
    const words = line.split(' ').filter((word) => word.length > 0);
    for (const word of words) for (const other of words) relate(word, other);
  }
  for (const line of NARROWER.split('\n')) {
    const [narrow, broad] = line.split('→').map((side) => side.split(' ').filter((word) => word.length > 0));
    if (narrow === undefined || broad === undefined) continue;
    for (const word of narrow) for (const other of broad) relate(word, other);
  }
  return related;
}
