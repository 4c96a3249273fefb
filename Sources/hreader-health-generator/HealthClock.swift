/// Calendar arithmetic and the export's time zones, in plain integers (no DateFormatter: it is far
/// too slow for millions of dates and its output depends on the machine's locale data).
///
/// The invented user lives in Central European time (+0100 in winter, +0200 in summer, switching on
/// the last Sundays of March and October at 01:00 UTC), and spends a week in US Eastern time
/// (-0500/-0400) in the middle of the exported period when it is at least 20 days long. Every
/// timestamp is written with the offset in force at that instant, as the Health app does.
struct HealthClock: Sendable {
    struct Local {
        var year: Int, month: Int, day: Int
        var hour: Int, minute: Int, second: Int
        var offsetMinutes: Int
    }

    /// 2026-11-20 10:36:11 +0100.
    let exportEpoch: Int64
    let days: Int
    /// Day 0's local date, as days since 1970-01-01.
    let firstDay: Int
    private(set) var tripStart: Int64 = 0
    private(set) var tripEnd: Int64 = 0

    private let tableBaseYear: Int
    /// Per year: EU summer time start/end, US daylight time start/end (UTC epochs).
    private let transitions: [(Int64, Int64, Int64, Int64)]

    init(days: Int) {
        self.days = days
        let exportDay = HealthClock.daysFromCivil(2026, 11, 20)
        exportEpoch = Int64(exportDay) * 86400 + 10 * 3600 + 36 * 60 + 11 - 3600
        firstDay = exportDay - days
        let firstYear = HealthClock.civil(fromDays: firstDay - 2).year
        tableBaseYear = firstYear
        transitions = (firstYear...2027).map { HealthClock.computeTransitions(year: $0) }
        if days >= 20 {
            let first = days / 2
            let length = min(7, days / 10)
            // Trip boundaries at Central European midnight (computed before the trip exists).
            let start = localMidnight(ofDay: first)
            let end = localMidnight(ofDay: first + length)
            tripStart = start
            tripEnd = end
        }
    }

    func isTraveling(_ epoch: Int64) -> Bool { epoch >= tripStart && epoch < tripEnd }

    func offsetMinutes(at epoch: Int64) -> Int {
        let year = HealthClock.civil(fromDays: Int(floorDiv(epoch, 86400))).year
        let rules = transitionsFor(year: year)
        if isTraveling(epoch) {
            return epoch >= rules.2 && epoch < rules.3 ? -240 : -300
        }
        return epoch >= rules.0 && epoch < rules.1 ? 120 : 60
    }

    /// The UTC epoch of local midnight starting day `day` of the exported period (0 = oldest).
    func localMidnight(ofDay day: Int) -> Int64 {
        let utcMidnight = Int64(firstDay + day) * 86400
        let offset = offsetMinutes(at: utcMidnight + 11 * 3600)
        return utcMidnight - Int64(offset) * 60
    }

    /// The local calendar date of day `day` of the exported period.
    func date(ofDay day: Int) -> (year: Int, month: Int, day: Int) {
        HealthClock.civil(fromDays: firstDay + day)
    }

    func local(_ epoch: Int64) -> Local {
        let offset = offsetMinutes(at: epoch)
        let shifted = epoch + Int64(offset) * 60
        let dayNumber = floorDiv(shifted, 86400)
        let seconds = Int(shifted - dayNumber * 86400)
        let date = HealthClock.civil(fromDays: Int(dayNumber))
        return Local(year: date.year, month: date.month, day: date.day,
                     hour: seconds / 3600, minute: seconds / 60 % 60, second: seconds % 60,
                     offsetMinutes: offset)
    }

    private func transitionsFor(year: Int) -> (Int64, Int64, Int64, Int64) {
        let index = year - tableBaseYear
        if index >= 0 && index < transitions.count { return transitions[index] }
        return HealthClock.computeTransitions(year: year)
    }

    private static func computeTransitions(year: Int) -> (Int64, Int64, Int64, Int64) {
        func lastSunday(month: Int, lastDay: Int) -> Int {
            let day = daysFromCivil(year, month, lastDay)
            return day - weekday(day)
        }
        func nthSunday(_ n: Int, month: Int) -> Int {
            let first = daysFromCivil(year, month, 1)
            return first + (7 - weekday(first)) % 7 + 7 * (n - 1)
        }
        let euStart = Int64(lastSunday(month: 3, lastDay: 31)) * 86400 + 3600
        let euEnd = Int64(lastSunday(month: 10, lastDay: 31)) * 86400 + 3600
        let usStart = Int64(nthSunday(2, month: 3)) * 86400 + 7 * 3600
        let usEnd = Int64(nthSunday(1, month: 11)) * 86400 + 6 * 3600
        return (euStart, euEnd, usStart, usEnd)
    }

    /// 0 = Sunday.
    static func weekday(_ days: Int) -> Int { ((days + 4) % 7 + 7) % 7 }

    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let quotient = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
}

extension ByteSink {
    /// `yyyy-MM-dd HH:mm:ss ±HHMM`, the Health export's timestamp format.
    mutating func healthDate(_ epoch: Int64, _ clock: HealthClock) {
        let t = clock.local(epoch)
        padded(t.year, width: 4); byte(UInt8(ascii: "-"))
        padded(t.month, width: 2); byte(UInt8(ascii: "-"))
        padded(t.day, width: 2); byte(UInt8(ascii: " "))
        padded(t.hour, width: 2); byte(UInt8(ascii: ":"))
        padded(t.minute, width: 2); byte(UInt8(ascii: ":"))
        padded(t.second, width: 2); byte(UInt8(ascii: " "))
        byte(t.offsetMinutes < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
        let offset = abs(t.offsetMinutes)
        padded(offset / 60, width: 2)
        padded(offset % 60, width: 2)
    }

    /// `yyyy-MM-dd`.
    mutating func calendarDate(_ date: (year: Int, month: Int, day: Int)) {
        padded(date.year, width: 4); byte(UInt8(ascii: "-"))
        padded(date.month, width: 2); byte(UInt8(ascii: "-"))
        padded(date.day, width: 2)
    }
}

/// ISO 8601 forms for the FHIR resources and GPX files (few, so Strings are fine here).
extension HealthClock {
    func fhirDateTime(_ epoch: Int64) -> String {
        let t = local(epoch)
        let sign = t.offsetMinutes < 0 ? "-" : "+"
        let offset = abs(t.offsetMinutes)
        return "\(pad(t.year, 4))-\(pad(t.month, 2))-\(pad(t.day, 2))T\(pad(t.hour, 2)):\(pad(t.minute, 2)):\(pad(t.second, 2))\(sign)\(pad(offset / 60, 2)):\(pad(offset % 60, 2))"
    }

    func fhirDate(_ epoch: Int64) -> String {
        let t = local(epoch)
        return "\(pad(t.year, 4))-\(pad(t.month, 2))-\(pad(t.day, 2))"
    }

    func utcISO(_ epoch: Int64) -> String {
        let dayNumber = floorDiv(epoch, 86400)
        let seconds = Int(epoch - dayNumber * 86400)
        let date = HealthClock.civil(fromDays: Int(dayNumber))
        return "\(pad(date.year, 4))-\(pad(date.month, 2))-\(pad(date.day, 2))T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2))Z"
    }

    /// `20261120103611+0100`, the CDA timestamp form.
    func cdaTimestamp(_ epoch: Int64) -> String {
        let t = local(epoch)
        let sign = t.offsetMinutes < 0 ? "-" : "+"
        let offset = abs(t.offsetMinutes)
        return "\(pad(t.year, 4))\(pad(t.month, 2))\(pad(t.day, 2))\(pad(t.hour, 2))\(pad(t.minute, 2))\(pad(t.second, 2))\(sign)\(pad(offset / 60, 2))\(pad(offset % 60, 2))"
    }
}

func pad(_ value: Int, _ width: Int) -> String {
    let text = String(value)
    return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
}
