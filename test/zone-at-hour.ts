/** A fixed-offset IANA zone where it is `hour` o'clock now (Etc/GMT-2 is two hours ahead of UTC): tests that need the lead's daytime or night. */
export function zoneAtHour(hour: number): string {
  const off = ((((hour - new Date().getUTCHours()) % 24) + 36) % 24) - 12;
  return off === 0 ? 'Etc/UTC' : `Etc/GMT${off > 0 ? '-' : '+'}${Math.abs(off)}`;
}
