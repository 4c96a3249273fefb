import Foundation
import HReaderModel

/// A person's age as people count it: on dates, today's local date (DayCalendar, the timeline's clock)
/// against the birth date, a partial birth date ("1980", "1980-04") taken as its period's first day.
/// One way for the summary, the tiles and `patients show`, none through Foundation's Calendar.
struct LocalAge {
    /// Whole years, months and weeks lived.
    let years: Int
    let months: Int
    let weeks: Int

    /// Nil without a readable birth date, or for one after today.
    init?(birthDate: String?, at now: Date = Date(), zone: DayZone = .local) {
        guard let birthDate, ClinicalTime.parse(birthDate) != nil else { return nil }
        let born = birthDate.prefix(10).split(separator: "-").compactMap { Int($0) }
        var calendar = DayCalendar(zone)
        let today = calendar.day(containing: Int64(now.timeIntervalSince1970.rounded(.down))).text.split(separator: "-").compactMap { Int($0) }
        guard let year = born.first, today.count == 3 else { return nil }
        let (month, day) = (born.count > 1 ? born[1] : 1, born.count > 2 ? born[2] : 1)
        let days = CivilDays.days(today[0], today[1], today[2]) - CivilDays.days(year, month, day)
        guard days >= 0 else { return nil }
        months = (today[0] - year) * 12 + (today[1] - month) - (today[2] < day ? 1 : 0)
        years = months / 12
        weeks = days / 7
    }
}
