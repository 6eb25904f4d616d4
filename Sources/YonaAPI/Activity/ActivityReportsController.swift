import Foundation
import Vapor
import YonaDomain

/// Yona's activity reports: `/users/{u}/activity/...` for the user's own, `/users/{u}/buddies/{b}/activity/...` for a
/// buddy who shares (sending status accepted), and `/users/{u}/activity/withBuddies/days/` for both side by side.
package enum ActivityReportsController {
    package static let daysPageSize = 3
    package static let weeksPageSize = 2

    package static func register(_ routes: any RoutesBuilder) {
        for (base, scope) in [
            (routes.grouped("users", ":userID", "activity"), own),
            (routes.grouped("users", ":userID", "buddies", ":buddyID", "activity"), buddy),
        ] as [(any RoutesBuilder, @Sendable (Request) async throws -> ReportScope)] {
            base.get("days") { try await dayPage($0, scope: try await scope($0)) }
            base.get("days", ":date") { try await day($0, scope: try await scope($0)) }
            base.get("days", ":date", "details", ":goalID") { try await dayDetail($0, scope: try await scope($0)) }
            base.get("weeks") { try await weekPage($0, scope: try await scope($0)) }
            base.get("weeks", ":week") { try await week($0, scope: try await scope($0)) }
            base.get("weeks", ":week", "details", ":goalID") { try await weekDetail($0, scope: try await scope($0)) }
            base.get("days", ":date", "details", ":goalID", "messages") { try await comments($0, scope: try await scope($0), week: false) }
            base.get("weeks", ":week", "details", ":goalID", "messages") { try await comments($0, scope: try await scope($0), week: true) }
        }
        // The activities behind one's own day detail (Yona has them for the user only, and links them from nowhere).
        routes.grouped("users", ":userID", "activity").get("days", ":date", "details", ":goalID", "raw") {
            try await rawActivities($0, scope: try await own($0))
        }
        // Only a buddy's day or week takes a new comment; one's own takes replies (`yona:reply` on the message).
        let buddyBase = routes.grouped("users", ":userID", "buddies", ":buddyID", "activity")
        buddyBase.post("days", ":date", "details", ":goalID", "messages") { try await addComment($0, scope: try await buddy($0), week: false) }
        buddyBase.post("weeks", ":week", "details", ":goalID", "messages") { try await addComment($0, scope: try await buddy($0), week: true) }
        let withBuddies = routes.grouped("users", ":userID", "activity", "withBuddies", "days")
        withBuddies.get(use: withBuddiesPage)
        withBuddies.get(":date", use: withBuddiesDay)
    }

    // MARK: Whose reports

    @Sendable package static func own(_ req: Request) async throws -> ReportScope {
        let user = try await req.unlockPathUser()
        guard user.isConfirmed else { throw YonaError(.mobileNumberNotConfirmed) }
        return ReportScope(
            links: req.rendering.links, me: user.id, viewer: user, buddy: nil,
            subject: .init(
                userAnonymizedID: user.privateData.userAnonymizedID,
                earliestDay: UserCalendar.startOfDay(user.privateData.creationTime)))
    }

    @Sendable package static func buddy(_ req: Request) async throws -> ReportScope {
        let user = try await req.unlockPathUser()
        let buddyID = try req.uuidParameter("buddyID")
        guard let buddy = user.privateData.buddies.first(where: { $0.id == buddyID }) else { throw YonaError(.buddyNotFound) }
        // A buddy who does not share has no reports (Yona's apps only follow the links a sharing buddy has).
        guard buddy.sendingStatus == .accepted, let anonymizedID = buddy.buddyUserAnonymizedID else { throw YonaError(.buddyNotFound) }
        return ReportScope(
            links: req.rendering.links, me: user.id, viewer: user, buddy: (buddy.id, buddy.userID),
            subject: .init(userAnonymizedID: anonymizedID, earliestDay: sharingStart(buddy)))
    }

    /// Yona shows a buddy's days from the date the buddy relation last changed, that date taken in UTC.
    package static func sharingStart(_ buddy: PrivateBuddy) -> Date {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let c = utc.dateComponents([.year, .month, .day], from: buddy.lastStatusChangeTime)
        return UserCalendar.calendar.date(from: DateComponents(year: c.year, month: c.month, day: c.day)) ?? buddy.lastStatusChangeTime
    }

    // MARK: Days

    @Sendable package static func dayPage(_ req: Request, scope: ReportScope) async throws -> Response {
        let number = try req.pagingParameter("page", default: 0, range: 0...100_000)
        let size = try req.pagingParameter("size", default: daysPageSize, range: 1...2000)
        let page = try await req.reports.dayPage(scope.subject, number: number, size: size)
        return try .hal(
            ReportPageDTO(
                rel: "yona:dayActivityOverviews", items: page.items.map { scope.dayOverview($0) }, number: number, size: size,
                totalElements: page.totalElements, href: { "\(scope.base)/days/?page=\($0)&size=\(size)" }))
    }

    @Sendable package static func day(_ req: Request, scope: ReportScope) async throws -> Response {
        let start = try dayParameter(req)
        return try .hal(scope.dayOverview(try await req.reports.day(start, of: scope.subject), topLevel: true))
    }

    @Sendable package static func dayDetail(_ req: Request, scope: ReportScope) async throws -> Response {
        let start = try dayParameter(req)
        let entry = try await req.reports.dayDetail(start, versionID: try req.uuidParameter("goalID"), of: scope.subject)
        let href = scope.dayDetails(start, entry.version)
        var links = HALLinks(self: href)
        links.add("yona:goal", scope.goal(entry.version))
        links.add("yona:messages", "\(href)/messages/")
        let previous = UserCalendar.adding(days: -1, to: start)
        if previous >= scope.subject.earliestDay, entry.version.governs(intervalEndingAt: start) {
            links.add("prev", scope.dayDetails(previous, entry.version))
        }
        let next = UserCalendar.adding(days: 1, to: start)
        if next < Date() { links.add("next", scope.dayDetails(next, entry.version)) }
        scope.addBuddyLinks(to: &links, messages: "\(href)/messages/")
        return try .hal(
            DayActivityDTO(
                date: UserCalendar.day(start), timeZoneId: UserCalendar.timeZoneID, spread: entry.figures.spread,
                totalActivityDurationMinutes: entry.figures.totalMinutes, goalAccomplished: entry.figures.accomplished,
                totalMinutesBeyondGoal: entry.figures.minutesBeyondGoal, _links: links))
    }

    /// Yona's raw activities: each activity of the day as stored (an app's sessions and the network activity apart),
    /// with the app (sealed to the user's inbox, so only this request can read it) and the device's name.
    @Sendable package static func rawActivities(_ req: Request, scope: ReportScope) async throws -> Response {
        let start = try dayParameter(req)
        let goalID = try req.uuidParameter("goalID")
        let raw = try await req.reports.rawActivities(start, versionID: goalID, of: scope.subject)
        let inbox = try scope.viewer.anonymousInbox()
        let names = Dictionary(scope.viewer.privateData.devices.map { ($0.deviceAnonymizedID, $0.name) }) { first, _ in first }
        let items = try raw.map { activity in
            RawActivityDTO(
                start: activity.span.start, end: activity.span.end, app: try ActivityApp.openName(activity.sealedApp, inbox: inbox),
                deviceName: activity.deviceAnonymizedID.flatMap { names[$0] } ?? "n/a")
        }
        let href = "\(scope.base)/days/\(UserCalendar.day(start))/details/\(goalID.lowercasedString)/raw/"
        return try .hal(RawActivitiesDTO(_embedded: ["yona:activities": items], _links: HALLinks(self: href)))
    }

    // MARK: Weeks

    @Sendable package static func weekPage(_ req: Request, scope: ReportScope) async throws -> Response {
        let number = try req.pagingParameter("page", default: 0, range: 0...100_000)
        let size = try req.pagingParameter("size", default: weeksPageSize, range: 1...2000)
        let page = try await req.reports.weekPage(scope.subject, number: number, size: size)
        return try .hal(
            ReportPageDTO(
                rel: "yona:weekActivityOverviews", items: page.items.map { scope.weekOverview($0) }, number: number, size: size,
                totalElements: page.totalElements, href: { "\(scope.base)/weeks/?page=\($0)&size=\(size)" }))
    }

    @Sendable package static func week(_ req: Request, scope: ReportScope) async throws -> Response {
        let sunday = try weekParameter(req)
        return try .hal(scope.weekOverview(try await req.reports.week(sunday, of: scope.subject), topLevel: true))
    }

    @Sendable package static func weekDetail(_ req: Request, scope: ReportScope) async throws -> Response {
        let sunday = try weekParameter(req)
        let entry = try await req.reports.weekDetail(sunday, versionID: try req.uuidParameter("goalID"), of: scope.subject)
        let href = scope.weekDetails(sunday, entry.version)
        var links = HALLinks(self: href)
        links.add("yona:goal", scope.goal(entry.version))
        links.add("yona:messages", "\(href)/messages/")
        let previous = UserCalendar.adding(days: -7, to: sunday)
        if previous >= UserCalendar.weekStart(scope.subject.earliestDay), entry.version.governs(intervalEndingAt: sunday) {
            links.add("prev", scope.weekDetails(previous, entry.version))
        }
        let next = UserCalendar.adding(days: 7, to: sunday)
        if next < Date() { links.add("next", scope.weekDetails(next, entry.version)) }
        scope.addBuddyLinks(to: &links, messages: "\(href)/messages/")
        return try .hal(
            WeekActivityDTO(
                date: UserCalendar.week(sunday), timeZoneId: UserCalendar.timeZoneID, spread: entry.spread,
                totalActivityDurationMinutes: entry.totalMinutes, dayActivities: scope.daysOfWeek(entry), _links: links))
    }

    // MARK: Comments

    /// The interval a details URL names, checked as its details are (the version in force, not before the first day),
    /// without computing its figures.
    package static func commentInterval(_ req: Request, scope: ReportScope, week: Bool) async throws -> (ActivityCommentService.Interval, String) {
        let versionID = try req.uuidParameter("goalID")
        if week {
            let sunday = try weekParameter(req)
            let version = try await req.reports.weekVersion(versionID, week: sunday, of: scope.subject).version
            return (
                .init(ownerAnonymizedID: scope.subject.userAnonymizedID, version: version, key: "week:\(UserCalendar.week(sunday))"),
                scope.weekDetails(sunday, version)
            )
        }
        let start = try dayParameter(req)
        let version = try await req.reports.dayVersion(versionID, day: start, of: scope.subject)
        return (
            .init(ownerAnonymizedID: scope.subject.userAnonymizedID, version: version, key: "day:\(UserCalendar.day(start))"),
            scope.dayDetails(start, version)
        )
    }

    /// The comments on a day or week in the viewer's inbox, whole threads in the order they began (4 a page).
    package static func comments(_ req: Request, scope: ReportScope, week: Bool) async throws -> Response {
        let number = try req.pagingParameter("page", default: 0, range: 0...100_000)
        let size = try req.pagingParameter("size", default: 4, range: 1...2000)
        let (interval, details) = try await commentInterval(req, scope: scope, week: week)
        let thread = try await req.comments.thread(of: scope.viewer, goalID: interval.version.goalID, interval: interval.key)
        let items = thread.dropFirst(number * size).prefix(size).map { req.rendering.message($0, of: scope.viewer, topLevel: false) }
        return try .hal(
            ReportPageDTO(
                rel: "yona:messages", items: Array(items), number: number, size: size, totalElements: thread.count,
                href: { "\(details)/messages/?page=\($0)&size=\(size)" }))
    }

    /// A new comment on a buddy's day or week: the buddy gets it (and a push), the sender its own copy, which answers.
    package static func addComment(_ req: Request, scope: ReportScope, week: Bool) async throws -> Response {
        let text = try ActivityCommentService.checked(try req.decodeStrict(CommentRequest.self).message)
        let (interval, _) = try await commentInterval(req, scope: scope, week: week)
        let id = try await req.comments.comment(from: scope.viewer, on: interval, text: text)
        return try .hal(req.rendering.message(try await req.messages.message(id, of: scope.viewer), of: scope.viewer, topLevel: true))
    }

    // MARK: With buddies

    @Sendable package static func withBuddiesPage(req: Request) async throws -> Response {
        let number = try req.pagingParameter("page", default: 0, range: 0...100_000)
        let size = try req.pagingParameter("size", default: daysPageSize, range: 1...2000)
        let context = try await withBuddiesContext(req)
        let base = "\(context.links.user(context.me))/activity/withBuddies/days/"
        let device = context.deviceID.lowercasedString
        func href(_ number: Int) -> String { "\(base)?requestingDeviceId=\(device)&page=\(number)&size=\(size)" }
        guard let earliest = context.earliest else {
            return try .hal(
                ReportPageDTO<DayActivityOverviewWithBuddiesDTO>(
                    rel: "yona:dayActivityOverviews", items: [], number: number, size: size, totalElements: 0, href: href))
        }
        let window = try ActivityReportService.dayWindow(from: earliest, number: number, size: size, now: Date())
        let items = try await context.overviews(window.starts, reports: req.reports)
        return try .hal(
            ReportPageDTO(
                rel: "yona:dayActivityOverviews", items: items, number: number, size: size, totalElements: window.total, href: href))
    }

    @Sendable package static func withBuddiesDay(req: Request) async throws -> Response {
        let start = try dayParameter(req)
        let context = try await withBuddiesContext(req)
        guard let earliest = context.earliest else { throw YonaError(.buddyListEmpty) }
        guard start >= earliest else { throw YonaError(.dateTooEarly, quoting: UserCalendar.day(start)) }
        return try .hal(try await context.overviews([start], reports: req.reports, topLevel: true)[0])
    }

    package static func withBuddiesContext(_ req: Request) async throws -> WithBuddiesContext {
        let user = try await req.unlockPathUser()
        guard user.isConfirmed else { throw YonaError(.mobileNumberNotConfirmed) }
        let deviceID = try req.requiredUUIDQuery("requestingDeviceId")
        let sharing = user.privateData.buddies.compactMap { buddy -> (PrivateBuddy, UUID)? in
            guard buddy.sendingStatus == .accepted, let id = buddy.buddyUserAnonymizedID else { return nil }
            return (buddy, id)
        }
        return WithBuddiesContext(
            links: req.rendering.links, me: user.id, viewer: user, deviceID: deviceID,
            own: .init(userAnonymizedID: user.privateData.userAnonymizedID, earliestDay: UserCalendar.startOfDay(user.privateData.creationTime)),
            buddies: sharing.map { buddy, id in
                (buddy.id, buddy.userID, ActivityReportService.Subject(userAnonymizedID: id, earliestDay: sharingStart(buddy)))
            })
    }

    // MARK: Parameters

    package static func dayParameter(_ req: Request) throws -> Date {
        let raw = req.parameters.get("date") ?? ""
        guard let start = UserCalendar.parseDay(raw) else { throw YonaError(.invalidDate, quoting: raw) }
        return start
    }

    package static func weekParameter(_ req: Request) throws -> Date {
        let raw = req.parameters.get("week") ?? ""
        guard let sunday = UserCalendar.parseWeek(raw) else { throw YonaError(.invalidDate, quoting: raw) }
        return sunday
    }
}

extension Request {
    package var reports: ActivityReportService { ActivityReportService(db: store) }
    package var comments: ActivityCommentService { ActivityCommentService(db: store) }
}

/// `POST …/details/{goalId}/messages/` body.
package struct CommentRequest: StrictBody {
    package let message: String?
    package static let allowedKeys: Set<String> = ["message"]
}

/// Whose reports a request reads and how their links are built.
package struct ReportScope: Sendable {
    package let links: LinkBuilder
    package let me: UUID
    package let viewer: UnlockedUser
    /// The buddy (its id in my list, its user id) when these are a buddy's reports.
    package let buddy: (id: UUID, userID: UUID)?
    package let subject: ActivityReportService.Subject

    package var base: String {
        if let buddy { return "\(links.buddy(me, buddy.id))/activity" }
        return "\(links.user(me))/activity"
    }

    /// The goal version's own document, as the requester sees it.
    package func goal(_ version: GoalVersion) -> String { links.asRequester(links.goal(buddy?.userID ?? me, version.id), me) }

    package func dayDetails(_ day: Date, _ version: GoalVersion) -> String {
        "\(base)/days/\(UserCalendar.day(day))/details/\(version.id.lowercasedString)"
    }

    package func weekDetails(_ sunday: Date, _ version: GoalVersion) -> String {
        "\(base)/weeks/\(UserCalendar.week(sunday))/details/\(version.id.lowercasedString)"
    }

    /// On a buddy's details: where to comment, and the buddy.
    package func addBuddyLinks(to links: inout HALLinks, messages: String) {
        guard let buddy else { return }
        links.add("yona:addComment", messages)
        links.add("yona:buddy", self.links.buddy(me, buddy.id))
    }

    package func dayOverview(_ day: ActivityReportService.Day, topLevel: Bool = false) -> DayActivityOverviewDTO {
        DayActivityOverviewDTO(
            date: UserCalendar.day(day.start), timeZoneId: UserCalendar.timeZoneID,
            dayActivities: day.entries.map { entry in
                var links = HALLinks()
                links.add("yona:goal", goal(entry.version))
                links.add("yona:dayDetails", dayDetails(day.start, entry.version))
                return Self.dayActivity(entry.figures, spec: entry.version.spec, links: links)
            },
            _links: HALLinks(self: "\(base)/days/\(UserCalendar.day(day.start))", topLevel: topLevel))
    }

    package func weekOverview(_ week: ActivityReportService.Week, topLevel: Bool = false) -> WeekActivityOverviewDTO {
        WeekActivityOverviewDTO(
            date: UserCalendar.week(week.start), timeZoneId: UserCalendar.timeZoneID,
            weekActivities: week.entries.map { entry in
                var links = HALLinks()
                links.add("yona:weekDetails", weekDetails(week.start, entry.version))
                links.add("yona:goal", goal(entry.version))
                return WeekActivityDTO(dayActivities: daysOfWeek(entry), _links: links)
            },
            _links: HALLinks(self: "\(base)/weeks/\(UserCalendar.week(week.start))", topLevel: topLevel))
    }

    package func daysOfWeek(_ entry: ActivityReportService.WeekEntry) -> [String: DayActivityDTO] {
        Dictionary(
            uniqueKeysWithValues: entry.days.map { day in
                var links = HALLinks()
                links.add("yona:dayDetails", dayDetails(day.start, day.version))
                return (
                    UserCalendar.weekdayName(day.start),
                    DayActivityDTO(
                        totalActivityDurationMinutes: day.figures.totalMinutes, goalAccomplished: day.figures.accomplished,
                        totalMinutesBeyondGoal: day.figures.minutesBeyondGoal, _links: links)
                )
            })
    }

    /// A day of a goal in an overview: the spread only for a time-zone goal (Yona's apps draw it on the overview).
    package static func dayActivity(_ figures: DayFigures, spec: GoalSpec, links: HALLinks) -> DayActivityDTO {
        let isTimeZone = if case .timeZone = spec { true } else { false }
        return DayActivityDTO(
            spread: isTimeZone ? figures.spread : nil, totalActivityDurationMinutes: figures.totalMinutes,
            goalAccomplished: figures.accomplished, totalMinutesBeyondGoal: figures.minutesBeyondGoal, _links: links)
    }
}

/// The with-buddies overview of one user: the user's goals beside those of every buddy who shares, per activity
/// category, in the categories the buddies have goals in; from the first day any of them started sharing.
package struct WithBuddiesContext: Sendable {
    package let links: LinkBuilder
    package let me: UUID
    package let viewer: UnlockedUser
    package let deviceID: UUID
    package let own: ActivityReportService.Subject
    package let buddies: [(id: UUID, userID: UUID, subject: ActivityReportService.Subject)]

    package var earliest: Date? { buddies.map(\.subject.earliestDay).min() }

    package func overviews(_ starts: [Date], reports: ActivityReportService, topLevel: Bool = false) async throws
        -> [DayActivityOverviewWithBuddiesDTO]
    {
        guard let earliest else { return [] }
        // All buddies' goal versions in one query, used for the categories and for their days.
        let buddyVersions = try await reports.versions(ofAnonymizedUsers: buddies.map(\.subject.userAnonymizedID))
        let categories = Set(buddyVersions.values.flatMap { $0.map(\.categoryID) })
        let ownScope = ReportScope(links: links, me: me, viewer: viewer, buddy: nil, subject: own)
        var perUser: [(ReportScope, [Date: ActivityReportService.Day], Bool)] = []
        let ownDays = try await reports.days(
            starts, of: .init(userAnonymizedID: own.userAnonymizedID, earliestDay: earliest), categories: categories)
        perUser.append((ownScope, Dictionary(uniqueKeysWithValues: ownDays.map { ($0.start, $0) }), true))
        for buddy in buddies {
            let scope = ReportScope(links: links, me: me, viewer: viewer, buddy: (buddy.id, buddy.userID), subject: buddy.subject)
            let days = try await reports.days(
                starts, of: buddy.subject, versions: buddyVersions[buddy.subject.userAnonymizedID] ?? [])
            perUser.append((scope, Dictionary(uniqueKeysWithValues: days.map { ($0.start, $0) }), false))
        }
        return starts.map { start in
            var byCategory: [UUID: [DayActivityDTO]] = [:]
            var order: [UUID] = []
            for (scope, days, isOwn) in perUser {
                for entry in days[start]?.entries ?? [] {
                    var entryLinks = HALLinks()
                    entryLinks.add("yona:goal", scope.goal(entry.version))
                    entryLinks.add("yona:dayDetails", scope.dayDetails(start, entry.version))
                    if isOwn {
                        entryLinks.add("yona:user", links.user(me, requestingUserID: me, requestingDeviceID: deviceID))
                    } else if let buddy = scope.buddy {
                        entryLinks.add("yona:buddy", links.buddy(me, buddy.id))
                    }
                    if byCategory[entry.version.categoryID] == nil { order.append(entry.version.categoryID) }
                    byCategory[entry.version.categoryID, default: []].append(
                        ReportScope.dayActivity(entry.figures, spec: entry.version.spec, links: entryLinks))
                }
            }
            let selfHref =
                "\(links.user(me))/activity/withBuddies/days/\(UserCalendar.day(start))?requestingDeviceId=\(deviceID.lowercasedString)"
            let categoryItems = order.map { category in
                var categoryLinks = HALLinks()
                categoryLinks.add("yona:activityCategory", links.activityCategory(category))
                return DayActivityOverviewWithBuddiesDTO.Category(dayActivitiesForUsers: byCategory[category] ?? [], _links: categoryLinks)
            }
            return DayActivityOverviewWithBuddiesDTO(
                date: UserCalendar.day(start), timeZoneId: UserCalendar.timeZoneID, dayActivities: categoryItems,
                _links: HALLinks(self: selfHref, topLevel: topLevel))
        }
    }
}
