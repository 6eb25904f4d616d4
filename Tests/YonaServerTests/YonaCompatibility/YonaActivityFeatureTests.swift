import Foundation
import Testing

@testable import YonaAPI
@testable import YonaDomain
@testable import YonaServer
@testable import YonaStore

/// Yona's `ActivityTest.groovy`, feature by feature: the day and week reports the apps open on, driven the way the
/// apps and the classifier drive them (app activity on the device's link, network activity on the analyzer API).
@Suite struct YonaActivityFeatureTests {
    /// Yona's relative times (`"W-1 Mon 03:15"`): `weeksBack` weeks before this Sunday-started week, on `weekday`
    /// (0 = Sunday), in Europe/Amsterdam.
    static func at(_ weeksBack: Int, _ weekday: Int, _ hour: Int, _ minute: Int) -> Date {
        let day = UserCalendar.adding(days: -7 * weeksBack + weekday, to: UserCalendar.weekStart(Date()))
        return UserCalendar.calendar.date(bySettingHour: hour, minute: minute, second: 0, of: day)!
    }

    /// Days from `weeksBack`/`weekday` to today, as Yona's `relativeDateStringToDaysOffset`: the index in a day list.
    static func offset(_ weeksBack: Int, _ weekday: Int) -> Int {
        UserCalendar.days(from: at(weeksBack, weekday, 12, 0), to: Date())
    }

    static var currentWeekday: Int { UserCalendar.calendar.component(.weekday, from: Date()) - 1 }

    static var iPhone: [String: Any] {
        [
            "deviceName": "Richard's iPhone", "deviceOperatingSystem": "IOS", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1,
        ]
    }

    /// Yona's `setCreationTime`: the user's edit link with the user's own fields and an earlier `creationTime`.
    static func date(_ server: TestServer, _ app: YonaApp, to time: Date) async throws -> YonaApp {
        let edit = try #require(app.link("edit"))
        var body: [String: Any] = [:]
        for key in ["firstName", "lastName", "nickname", "mobileNumber"] { body[key] = app.json[key] }
        body["creationTime"] = YonaDateFormat.timestamp(time)
        let updated = try await server.request(.PUT, edit, headers: app.headers, json: body)
        try #require(updated.status == 200, "\(updated.text)")
        return try await app.reload()
    }

    static func addGoal(_ server: TestServer, _ app: YonaApp, _ body: [String: Any], at time: Date) async throws -> String {
        var body = body
        body["creationTime"] = YonaDateFormat.timestamp(time)
        let goals = try #require(value(app.json, "_embedded", "yona:goals", "_links", "self", "href") as? String)
        let added = try await server.request(.POST, goals, headers: app.headers, json: body)
        try #require(added.status == 201, "\(added.text)")
        return try #require(value(added.json, "_links", "self", "href") as? String)
    }

    static func appActivity(_ server: TestServer, _ app: YonaApp, _ name: String, _ start: Date, _ end: Date) async throws {
        let href = try #require(value(app.requestingDevice, "_links", "yona:appActivity", "href") as? String)
        let posted = try await server.request(
            .POST, href, headers: app.headers,
            json: [
                "deviceDateTime": YonaDateFormat.timestamp(Date()),
                "activities": [["application": name, "startTime": YonaDateFormat.timestamp(start), "endTime": YonaDateFormat.timestamp(end)]],
            ])
        try #require(posted.status == 204, "\(posted.text)")
    }

    static func networkActivity(_ server: TestServer, _ app: YonaApp, _ category: String, at time: Date) async throws {
        let login = try #require(value(app.requestingDevice, "vpnProfile", "vpnLoginID") as? String).split(separator: "$")
        let posted = try await server.postNetworkActivity(
            String(login[0]), deviceIndex: Int(login[1])!, categories: [category], url: "https://\(category).example/", at: time)
        try #require(posted.status == 204, "\(posted.text)")
    }

    /// A GET of a report link; the answer must match its schema in openapi.yaml (picked by the path's shape).
    static func get(_ server: TestServer, _ href: String?, _ app: YonaApp, query: String = "") async throws -> [String: Any] {
        let url = try #require(href) + query
        let answer = try await server.request(.GET, url, headers: app.headers)
        try #require(answer.status == 200, "\(url): \(answer.status) \(answer.text)")
        if let schema = schema(of: url) {
            let violation = try OpenAPISchema.violation(of: answer.body, as: schema)
            #expect(violation == nil, "\(url) against \(schema): \(violation ?? "")")
        }
        return answer.json
    }

    static func schema(of url: String) -> String? {
        let path = URLComponents(string: url)?.path ?? url
        let parts = path.split(separator: "/").map(String.init)
        guard let activity = parts.firstIndex(of: "activity") else { return nil }
        let rest = Array(parts[(activity + 1)...])
        switch (rest.first, rest.count) {
        case ("withBuddies", 2): return "DayActivityOverviewWithBuddiesPage"
        case ("withBuddies", 3): return "DayActivityOverviewWithBuddies"
        case ("days", 1): return "DayActivityOverviewPage"
        case ("days", 2): return "DayActivityOverview"
        case ("days", 4): return "DayActivityDetail"
        case ("weeks", 1): return "WeekActivityOverviewPage"
        case ("weeks", 2): return "WeekActivityOverview"
        case ("weeks", 4): return "WeekActivityDetail"
        default: return nil
        }
    }

    static func items(_ page: [String: Any], _ rel: String) -> [[String: Any]] {
        value(page, "_embedded", rel) as? [[String: Any]] ?? []
    }

    /// The entry of a goal in a day or week item, found as the Groovy tests find it: by the goal's link.
    static func entry(_ list: Any?, goal: String) -> [String: Any]? {
        (list as? [[String: Any]])?.first { value($0, "_links", "yona:goal", "href") as? String == goal }
    }

    @Test(arguments: TestDatabase.available)
    func activityTestPageThroughTheReportsOfANewUser(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ")
            let gambling = try #require(richard.goals.first.flatMap { value($0, "_links", "self", "href") as? String })
            let gamblingAsRequester = Self.asRequester(gambling, richard)
            // as Yona's: one's own goal names its requester, the same href the reports give it (the apps compare them)
            #expect(gambling.hasSuffix("?requestingUserId=\(Self.userID(richard))"), "\(gambling)")
            #expect(richard.link("yona:dailyActivityReports") == "\(YonaAssertions.stripped(richard.url)!)/activity/days/")
            #expect(richard.link("yona:weeklyActivityReports") == "\(YonaAssertions.stripped(richard.url)!)/activity/weeks/")

            // days: one (today), the mandatory gambling goal without activity
            let days = try await Self.get(server, richard.link("yona:dailyActivityReports"), richard)
            #expect(value(days, "page", "size") as? Int == 3)
            #expect(value(days, "page", "totalElements") as? Int == 1)
            #expect(value(days, "_links", "next") == nil && value(days, "_links", "self", "href") != nil)
            let today = try #require(Self.items(days, "yona:dayActivityOverviews").first)
            #expect(today["date"] as? String == YonaAssertions.today)
            #expect(today["timeZoneId"] as? String == "Europe/Amsterdam")
            let day = try #require(Self.entry(today["dayActivities"], goal: gamblingAsRequester), "\(today)")
            #expect(day["totalActivityDurationMinutes"] as? Int == 0)
            #expect(day["goalAccomplished"] as? Bool == true)
            #expect(day["totalMinutesBeyondGoal"] as? Int == 0)
            #expect(day["spread"] == nil && day["date"] == nil && value(day, "_links", "self") == nil, "a budget goal's overview has no spread")
            #expect(try await Self.get(server, value(today, "_links", "self", "href") as? String, richard)["date"] as? String == YonaAssertions.today)

            // its detail: the whole day, no way back or forward yet
            let detail = try await Self.get(server, value(day, "_links", "yona:dayDetails", "href") as? String, richard)
            #expect((detail["spread"] as? [Int]) == Array(repeating: 0, count: 96))
            #expect(detail["date"] as? String == YonaAssertions.today && detail["goalAccomplished"] as? Bool == true)
            #expect(value(detail, "_links", "yona:goal", "href") as? String == gamblingAsRequester)
            #expect(value(detail, "_links", "prev") == nil && value(detail, "_links", "next") == nil)
            #expect(value(detail, "_links", "yona:messages", "href") != nil)
            #expect(value(detail, "_links", "yona:addComment") == nil && value(detail, "_links", "yona:buddy") == nil)

            // weeks: this one, with today in it
            let weeks = try await Self.get(server, richard.link("yona:weeklyActivityReports"), richard)
            #expect(value(weeks, "page", "size") as? Int == 2 && value(weeks, "page", "totalElements") as? Int == 1)
            let week = try #require(Self.items(weeks, "yona:weekActivityOverviews").first)
            #expect(week["date"] as? String == UserCalendar.week(UserCalendar.weekStart(Date())))
            let weekGoal = try #require(Self.entry(week["weekActivities"], goal: gamblingAsRequester))
            #expect((weekGoal["dayActivities"] as? [String: Any]).map { Array($0.keys) } == [UserCalendar.weekdayName(Date())])
            #expect(weekGoal["spread"] == nil && weekGoal["totalActivityDurationMinutes"] == nil)
            let weekDetail = try await Self.get(server, value(weekGoal, "_links", "yona:weekDetails", "href") as? String, richard)
            #expect((weekDetail["spread"] as? [Int]) == Array(repeating: 0, count: 96) && weekDetail["totalActivityDurationMinutes"] as? Int == 0)
            #expect(weekDetail["goalAccomplished"] == nil && value(weekDetail, "_links", "prev") == nil && value(weekDetail, "_links", "next") == nil)

            // with buddies: nobody shares yet
            let withBuddies = try await Self.get(server, richard.link("yona:dailyActivityReportsWithBuddies"), richard)
            #expect(withBuddies["_embedded"] == nil && value(withBuddies, "page", "totalElements") as? Int == 0)
            let base = try #require(richard.link("yona:dailyActivityReportsWithBuddies")).split(separator: "?")[0]
            let single = try await server.request(
                .GET, "\(base)\(YonaAssertions.today)?requestingDeviceId=\(richard.requestingDeviceID!)", headers: richard.headers)
            #expect(single.status == 404 && single.errorCode == "error.buddy.list.empty")
        }
    }

    @Test(arguments: TestDatabase.available)
    func activityTestPageThroughLastWeeksDaysAndWeeksWithActivity(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup (Yona's 'Retrieve activity report of previous week'): Richard since W-1 Mon 02:18, news a no-go goal
            // since then, social a time-zone goal (11:00-12:00) since W-1 Wed 13:55
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            richard = try await Self.date(server, richard, to: Self.at(1, 1, 2, 18))
            let news = try await Self.addGoal(server, richard, Self.budget(server, GoalsTests.news, 0), at: Self.at(1, 1, 2, 18))
            let social = try await Self.addGoal(server, richard, Self.zones(server, GoalsTests.social, ["11:00-12:00"]), at: Self.at(1, 3, 13, 55))
            richard = try await richard.reload()
            let (newsGoal, socialGoal) = (Self.asRequester(news, richard), Self.asRequester(social, richard))

            // act: NU.nl on the phone Monday and Tuesday, the classifier sees social sites Wednesday and Thursday
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 1, 3, 15), Self.at(1, 1, 3, 35))
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 2, 8, 45), Self.at(1, 2, 9, 10))
            try await Self.networkActivity(server, richard, "social", at: Self.at(1, 3, 15, 0))
            try await Self.networkActivity(server, richard, "social", at: Self.at(1, 4, 11, 30))

            // check the days: all of them since Richard's first, each with the goals of that day
            let totalDays = 6 + Self.currentWeekday + 1
            let days = try await Self.get(server, richard.link("yona:dailyActivityReports"), richard, query: "?size=\(totalDays)")
            #expect(value(days, "page", "totalElements") as? Int == totalDays)
            let list = Self.items(days, "yona:dayActivityOverviews")
            try #require(list.count == totalDays)
            func day(_ weekday: Int) -> [String: Any] { list[Self.offset(1, weekday)] }
            #expect(day(1)["date"] as? String == UserCalendar.day(Self.at(1, 1, 12, 0)))
            #expect((day(1)["dayActivities"] as? [Any])?.count == 2, "Monday: gambling and news; social came Wednesday")
            #expect((day(3)["dayActivities"] as? [Any])?.count == 3)
            let expected: [(Int, String, Int, Bool, Int)] = [
                (1, newsGoal, 20, false, 20), (2, newsGoal, 25, false, 25), (3, newsGoal, 0, true, 0),
                (3, socialGoal, 1, false, 1), (4, socialGoal, 1, true, 0), (5, socialGoal, 0, true, 0),
            ]
            for (weekday, goal, total, accomplished, beyond) in expected {
                let entry = try #require(Self.entry(day(weekday)["dayActivities"], goal: goal), "day \(weekday) \(goal)")
                #expect(entry["totalActivityDurationMinutes"] as? Int == total, "day \(weekday) \(goal)")
                #expect(entry["goalAccomplished"] as? Bool == accomplished, "day \(weekday) \(goal)")
                #expect(entry["totalMinutesBeyondGoal"] as? Int == beyond, "day \(weekday) \(goal)")
                #expect((entry["spread"] as? [Int])?.count == (goal == socialGoal ? 96 : nil), "only time-zone goals show the spread")
            }
            // Monday's news detail: 03:15-03:35 in quarters 13 and 14; the way back ends at Richard's first day
            let monday = try #require(Self.entry(day(1)["dayActivities"], goal: newsGoal))
            let mondayDetail = try await Self.get(server, value(monday, "_links", "yona:dayDetails", "href") as? String, richard)
            var spread = Array(repeating: 0, count: 96)
            (spread[13], spread[14]) = (15, 5)
            #expect(mondayDetail["spread"] as? [Int] == spread)
            #expect(value(mondayDetail, "_links", "prev") == nil)
            let tuesday = try #require(Self.entry(day(2)["dayActivities"], goal: newsGoal))
            #expect(value(mondayDetail, "_links", "next", "href") as? String == value(tuesday, "_links", "yona:dayDetails", "href") as? String)
            let wednesdaySocial = try #require(Self.entry(day(3)["dayActivities"], goal: socialGoal))
            let socialDetail = try await Self.get(server, value(wednesdaySocial, "_links", "yona:dayDetails", "href") as? String, richard)
            #expect((socialDetail["spread"] as? [Int])?[60] == 1 && value(socialDetail, "_links", "prev") == nil, "social began Wednesday")

            // paging: three days a page, newest first
            let firstPage = try await Self.get(server, richard.link("yona:dailyActivityReports"), richard)
            #expect(Self.items(firstPage, "yona:dayActivityOverviews").map { $0["date"] as? String } == list.prefix(3).map { $0["date"] as? String })
            let second = try await Self.get(server, value(firstPage, "_links", "next", "href") as? String, richard)
            #expect(
                Self.items(second, "yona:dayActivityOverviews").map { $0["date"] as? String }
                    == list.dropFirst(3).prefix(3).map { $0["date"] as? String })

            // check the weeks: last week has the three goals, news on six days, social on four
            let weeks = try await Self.get(server, richard.link("yona:weeklyActivityReports"), richard)
            #expect(value(weeks, "page", "totalElements") as? Int == 2)
            let lastWeek = try #require(Self.items(weeks, "yona:weekActivityOverviews").last)
            #expect(lastWeek["date"] as? String == UserCalendar.week(UserCalendar.weekStart(Self.at(1, 0, 12, 0))))
            #expect((lastWeek["weekActivities"] as? [Any])?.count == 3)
            let newsWeek = try #require(Self.entry(lastWeek["weekActivities"], goal: newsGoal))
            let newsDays = try #require(newsWeek["dayActivities"] as? [String: [String: Any]])
            #expect(Set(newsDays.keys) == ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"])
            #expect(newsDays["TUESDAY"]?["totalActivityDurationMinutes"] as? Int == 25 && newsDays["TUESDAY"]?["spread"] == nil)
            #expect((Self.entry(lastWeek["weekActivities"], goal: socialGoal)?["dayActivities"] as? [String: Any])?.count == 4)
            let newsWeekDetail = try await Self.get(server, value(newsWeek, "_links", "yona:weekDetails", "href") as? String, richard)
            (spread[35], spread[36]) = (15, 10)
            #expect(newsWeekDetail["spread"] as? [Int] == spread)
            #expect(newsWeekDetail["totalActivityDurationMinutes"] as? Int == 45)
            #expect(value(newsWeekDetail, "_links", "prev") == nil && value(newsWeekDetail, "_links", "next", "href") != nil)
        }
    }

    @Test(arguments: TestDatabase.available)
    func activityTestRetrieveActivityReportAfterGoalUpdate(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: news a no-go goal since W-1 Mon, NU.nl on Tuesday; on W-1 Wed 20:51 it becomes a 60-minute budget
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            richard = try await Self.date(server, richard, to: Self.at(1, 1, 2, 18))
            let category = ["yona:activityCategory": ["href": "\(server.baseURL)/activityCategories/\(GoalsTests.news)"]]
            let news = try await Self.addGoal(
                server, richard, ["@type": "BudgetGoal", "maxDurationMinutes": 0, "_links": category], at: Self.at(1, 1, 2, 18))
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 2, 8, 45), Self.at(1, 2, 9, 10))
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 4, 9, 13), Self.at(1, 4, 10, 7))
            let updated = try await server.request(
                .PUT, news, headers: richard.headers,
                json: [
                    "@type": "BudgetGoal", "maxDurationMinutes": 60, "creationTime": YonaDateFormat.timestamp(Self.at(1, 3, 20, 51)),
                    "_links": category,
                ])
            try #require(updated.status == 200, "\(updated.text)")
            richard = try await richard.reload()
            let history = try #require(
                richard.goals.first { $0["historyItem"] as? Bool == true }.flatMap { value($0, "_links", "self", "href") as? String })
            let (current, earlier) = (Self.asRequester(news, richard), Self.asRequester(history, richard))

            // check: days before the change show the version then in force, the change day on the new one
            let total = 6 + Self.currentWeekday + 1
            let days = Self.items(
                try await Self.get(server, richard.link("yona:dailyActivityReports"), richard, query: "?size=\(total)"), "yona:dayActivityOverviews")
            let tuesday = try #require(Self.entry(days[Self.offset(1, 2)]["dayActivities"], goal: earlier), "Tuesday is the no-go version's")
            #expect(tuesday["goalAccomplished"] as? Bool == false && tuesday["totalMinutesBeyondGoal"] as? Int == 25)
            #expect(Self.entry(days[Self.offset(1, 2)]["dayActivities"], goal: current) == nil)
            #expect(Self.entry(days[Self.offset(1, 3)]["dayActivities"], goal: current) != nil, "the change day is the new version's")
            let thursday = try #require(Self.entry(days[Self.offset(1, 4)]["dayActivities"], goal: current))
            #expect(thursday["totalActivityDurationMinutes"] as? Int == 54 && thursday["goalAccomplished"] as? Bool == true)
            // the week is the new version's, its earlier days link the earlier version's details
            let weeks = try await Self.get(server, richard.link("yona:weeklyActivityReports"), richard)
            let lastWeek = try #require(Self.items(weeks, "yona:weekActivityOverviews").last)
            let newsWeek = try #require(Self.entry(lastWeek["weekActivities"], goal: current), "\(lastWeek)")
            let historyID = try #require(Self.lastPathSegment(history))
            let weekDays = try #require(newsWeek["dayActivities"] as? [String: [String: Any]])
            #expect((value(weekDays["TUESDAY"], "_links", "yona:dayDetails", "href") as? String)?.hasSuffix(String(historyID)) == true)
            #expect((value(weekDays["THURSDAY"], "_links", "yona:dayDetails", "href") as? String)?.hasSuffix(String(historyID)) == false)
            // the earlier version's detail has no day after the change
            let wrong = try await server.request(
                .GET, "\(richard.link("yona:dailyActivityReports")!)\(UserCalendar.day(Self.at(1, 4, 12, 0)))/details/\(historyID)",
                headers: richard.headers)
            #expect(wrong.status == 400 && wrong.errorCode == "error.activity.date.goal.mismatch")
        }
    }

    @Test(arguments: TestDatabase.available)
    func activityTestBuddyReportsAndTheOverviewWithBuddies(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup: Richard and Bob share; Bob's phone reports a gambling site today
            let richardUser = try await server.createUser(firstName: "Richard", nickname: "RQ", extra: Self.iPhone)
            let bobUser = try await server.createUser(firstName: "Bob", nickname: "BD", extra: Self.iPhone)
            try await BuddyTests.connect(server, richard: richardUser, bob: bobUser)
            _ = try await server.messages(richardUser)
            let richard = try await YonaApp(server: server, json: [:], password: richardUser.password)
                .reloaded(from: "\(server.baseURL)\(richardUser.profilePath)")
            let bob = try await YonaApp(server: server, json: [:], password: bobUser.password).reloaded(
                from: "\(server.baseURL)\(bobUser.profilePath)")
            let oneMinuteAgo = Date().addingTimeInterval(-60)
            try await Self.networkActivity(server, bob, "gambling", at: oneMinuteAgo)

            // act: Richard follows his buddy's report links
            let buddy = try await Self.firstBuddy(server, richard)
            let days = try await Self.get(server, value(buddy, "_links", "yona:dailyActivityReports", "href") as? String, richard)

            // check: from the day they befriended (today), Bob's gambling with its minute, linked through Richard. As
            // Yona, sharing starts on the UTC date of the acceptance: between 23:00 and midnight UTC (in winter) that
            // is the day before Amsterdam's today, so the report has two days then.
            let sharingDays = YonaDateFormat.day(Date()) == UserCalendar.day(Date()) ? 1 : 2
            #expect(value(days, "page", "totalElements") as? Int == sharingDays)
            let today = try #require(Self.items(days, "yona:dayActivityOverviews").first)
            let bobGoals = try #require(
                value(buddy, "_embedded", "yona:user", "_embedded", "yona:goals", "_embedded", "yona:goals") as? [[String: Any]])
            let bobGambling = try #require(bobGoals.first.flatMap { value($0, "_links", "self", "href") as? String })
            let entry = try #require(Self.entry(today["dayActivities"], goal: bobGambling), "\(today)")
            #expect(entry["totalActivityDurationMinutes"] as? Int == 1 && entry["goalAccomplished"] as? Bool == false)
            let detail = try await Self.get(server, value(entry, "_links", "yona:dayDetails", "href") as? String, richard)
            let buddySelf = try #require(value(buddy, "_links", "self", "href") as? String)
            #expect(value(detail, "_links", "yona:buddy", "href") as? String == buddySelf)
            #expect(value(detail, "_links", "yona:addComment", "href") as? String == value(detail, "_links", "yona:messages", "href") as? String)
            #expect((value(detail, "_links", "self", "href") as? String)?.hasPrefix("\(buddySelf)/activity/days/") == true)
            let weeks = try await Self.get(server, value(buddy, "_links", "yona:weeklyActivityReports", "href") as? String, richard)
            let sharingStart = try #require(UserCalendar.parseDay(YonaDateFormat.day(Date())))
            let sharingWeeks = UserCalendar.weekStart(sharingStart) == UserCalendar.weekStart(Date()) ? 1 : 2
            #expect(value(weeks, "page", "totalElements") as? Int == sharingWeeks)

            // with buddies: the shared gambling category holds Richard's day and Bob's
            let withBuddies = try await Self.get(server, richard.link("yona:dailyActivityReportsWithBuddies"), richard)
            #expect(value(withBuddies, "page", "totalElements") as? Int == sharingDays)
            let shared = try #require(Self.items(withBuddies, "yona:dayActivityOverviews").first)
            let category = try #require(
                (shared["dayActivities"] as? [[String: Any]])?.first {
                    (value($0, "_links", "yona:activityCategory", "href") as? String)?.hasSuffix(GoalsTests.gambling) == true
                })
            #expect((value(category, "_links") as? [String: Any])?.count == 1)
            let users = try #require(category["dayActivitiesForUsers"] as? [[String: Any]])
            #expect(users.count == 2)
            let own = try #require(users.first { value($0, "_links", "yona:user") != nil })
            let theirs = try #require(users.first { value($0, "_links", "yona:buddy") != nil })
            #expect(own["totalActivityDurationMinutes"] as? Int == 0 && value(own, "_links", "yona:buddy") == nil)
            #expect(theirs["totalActivityDurationMinutes"] as? Int == 1 && value(theirs, "_links", "yona:buddy", "href") as? String == buddySelf)
            #expect(
                try await Self.get(server, value(shared, "_links", "self", "href") as? String, richard)["date"] as? String == YonaAssertions.today)
        }
    }

    @Test(arguments: TestDatabase.available)
    func activityTestBadDatesAndGoalsOfAnotherDay(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ")
            richard = try await Self.date(server, richard, to: Self.at(1, 1, 2, 18))
            let social = try await Self.addGoal(server, richard, Self.zones(server, GoalsTests.social, ["11:00-12:00"]), at: Self.at(1, 3, 13, 55))
            let socialID = try #require(Self.lastPathSegment(social))
            let days = try #require(richard.link("yona:dailyActivityReports"))
            let weeks = try #require(richard.link("yona:weeklyActivityReports"))
            for (path, status, code) in [
                ("\(days)2016-03-161234", 400, "error.invalid.date"),
                ("\(weeks)2016-W60", 400, "error.invalid.date"),
                ("\(days)\(UserCalendar.day(Self.at(2, 1, 12, 0)))", 400, "error.invalid.date.too.early"),
                ("\(weeks)\(UserCalendar.week(UserCalendar.weekStart(Self.at(3, 0, 12, 0))))", 400, "error.invalid.date.too.early"),
                ("\(days)\(UserCalendar.day(Self.at(1, 2, 12, 0)))/details/\(socialID)", 400, "error.activity.date.goal.mismatch"),
                (
                    "\(days)\(UserCalendar.day(Self.at(1, 4, 12, 0)))/details/\(UUID().uuidString.lowercased())", 400,
                    "error.goal.not.found.id.for.user.anonymized"
                ),
                ("\(days)?page=100", 400, "error.invalid.date.too.early"),
            ] {
                let answer = try await server.request(.GET, path, headers: richard.headers)
                #expect(answer.status == status && answer.errorCode == code, "\(path): \(answer.status) \(answer.text)")
            }
            #expect(
                try await server.request(.GET, "\(days)\(UserCalendar.day(Self.at(1, 4, 12, 0)))/details/\(socialID)", headers: richard.headers)
                    .status == 200)
            #expect(try await server.request(.GET, days, headers: [("Yona-Password", "wrong")]).errorCode == "error.decrypting.data")

            // Yona's `setGoalCreationTime`: the same goal with an earlier time re-dates it (not before the account)
            let tuesday = "\(days)\(UserCalendar.day(Self.at(1, 2, 12, 0)))/details/\(socialID)"
            let redate: (Date) -> [String: Any] = { time in
                [
                    "@type": "TimeZoneGoal", "zones": ["11:00-12:00"], "creationTime": YonaDateFormat.timestamp(time),
                    "_links": ["yona:activityCategory": ["href": "\(server.baseURL)/activityCategories/\(GoalsTests.social)"]],
                ]
            }
            let beforeAccount = try await server.request(.PUT, social, headers: richard.headers, json: redate(Self.at(1, 0, 12, 0)))
            #expect(beforeAccount.status == 400 && beforeAccount.errorCode == "error.goal.update.time.before.original")
            let redated = try await server.request(.PUT, social, headers: richard.headers, json: redate(Self.at(1, 1, 2, 18)))
            #expect(redated.status == 200, "\(redated.text)")
            #expect(try await server.request(.GET, tuesday, headers: richard.headers).status == 200, "the goal now governs Tuesday")
        }
    }

    // MARK: Raw activities

    /// Yona's `addDevice`: a second phone joins with the one-time password the first one left; the app on it.
    static func addDevice(_ server: TestServer, _ app: YonaApp, name: String, operatingSystem: String) async throws -> YonaApp {
        let request = try #require(app.link("yona:newDeviceRequest"))
        let set = try await server.request(.PUT, request, headers: app.headers, json: ["newDeviceRequestPassword": "Join-1"])
        try #require(set.status == 204, "\(set.text)")
        let added = try await server.request(
            .POST, "\(try #require(YonaAssertions.stripped(app.url)))/devices/", headers: [("Yona-NewDeviceRequestPassword", "Join-1")],
            json: ["name": name, "operatingSystem": operatingSystem, "appVersion": "1.0", "appVersionCode": 1])
        try #require(added.status == 201, "\(added.text)")
        return YonaApp(server: server, json: added.json, password: app.password)
    }

    /// A raw-activities URL of `goal`'s day.
    static func raw(_ app: YonaApp, day: Date, goal: String) throws -> String {
        let goalID = try #require(Self.lastPathSegment(goal))
        return "\(try #require(YonaAssertions.stripped(app.url)))/activity/days/\(UserCalendar.day(day))/details/\(goalID)/raw/"
    }

    /// What Yona's test compares: each raw activity as a map, sorted by start time and then device name.
    static func rawRows(_ server: TestServer, _ app: YonaApp, _ url: String) async throws -> [[String: String]] {
        let answer = try await server.request(.GET, url, headers: app.headers)
        try #require(answer.status == 200, "\(url): \(answer.text)")
        let violation = try OpenAPISchema.violation(of: answer.body, as: "RawActivities")
        #expect(violation == nil, "\(violation ?? "")")
        #expect(YonaAssertions.stripped(value(answer.json, "_links", "self", "href") as? String) == url)
        let items = try #require(value(answer.json, "_embedded", "yona:activities") as? [[String: Any]])
        return items.map { item in
            var row: [String: String] = [:]
            for (key, field) in item { row[key] = field as? String ?? (field as? Int).map(String.init) ?? "?" }
            return row
        }.sorted { ($0["startTime"] ?? "", $0["deviceName"] ?? "") < ($1["startTime"] ?? "", $1["deviceName"] ?? "") }
    }

    /// Yona's expected row: times in Europe/Amsterdam, the whole minutes and the same as a Java `Duration`.
    static func rawRow(_ start: Date, _ end: Date, app: String, device: String) -> [String: String] {
        let minutes = Int(end.timeIntervalSince(start) / 60)
        return [
            "startTime": YonaDateFormat.zonedTimestamp(start), "endTime": YonaDateFormat.zonedTimestamp(end), "app": app,
            "durationMinutes": String(minutes), "duration": minutes % 60 == 0 ? "PT\(minutes / 60)H" : "PT\(minutes)M", "deviceName": device,
        ]
    }

    static func newsBudget(_ server: TestServer, _ app: YonaApp, at time: Date) async throws -> String {
        try await addGoal(server, app, budget(server, GoalsTests.news, 0), at: time)
    }

    @Test("ActivityTest: Richard's can see his raw activities; Try get raw activities with an invalid date", arguments: TestDatabase.available)
    func activityTestRawActivities(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            richard = try await Self.date(server, richard, to: Self.at(1, 1, 2, 18))
            let news = try await Self.newsBudget(server, richard, at: Self.at(1, 1, 2, 18))
            richard = try await richard.reload()

            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 3, 3, 15), Self.at(1, 3, 3, 35))
            try await Self.networkActivity(server, richard, "News", at: Self.at(1, 3, 15, 0))

            let rows = try await Self.rawRows(server, richard, try Self.raw(richard, day: Self.at(1, 3, 9, 0), goal: news))
            #expect(
                rows == [
                    Self.rawRow(Self.at(1, 3, 3, 15), Self.at(1, 3, 3, 35), app: "NU.nl", device: "Richard's iPhone"),
                    Self.rawRow(Self.at(1, 3, 15, 0), Self.at(1, 3, 15, 1), app: "", device: "Richard's iPhone"),
                ])
            // Another day has none; a date that is not one is Yona's 400.
            #expect(try await Self.rawRows(server, richard, try Self.raw(richard, day: Self.at(1, 2, 9, 0), goal: news)).isEmpty)
            let bad = try Self.raw(richard, day: Self.at(1, 3, 9, 0), goal: news).replacingOccurrences(of: "/details/", with: "1234/details/")
            let refused = try await server.request(.GET, bad, headers: richard.headers)
            #expect(refused.status == 400 && refused.errorCode == "error.invalid.date", "\(refused.text)")
            // Only the user reads them: a wrong password is refused.
            let stranger = try await server.request(
                .GET, try Self.raw(richard, day: Self.at(1, 3, 9, 0), goal: news), headers: [("Yona-Password", "wrong")])
            #expect(stranger.status == 400 && stranger.errorCode == "error.decrypting.data", "\(stranger.text)")
        }
    }

    @Test("ActivityTest: Richard works on two devices", arguments: TestDatabase.available)
    func activityTestRichardWorksOnTwoDevices(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            richard = try await Self.date(server, richard, to: Self.at(1, 1, 2, 18))
            let news = try await Self.newsBudget(server, richard, at: Self.at(1, 1, 2, 18))
            let social = try await Self.addGoal(server, richard, Self.zones(server, GoalsTests.social, ["01:00-12:00"]), at: Self.at(1, 1, 2, 18))
            richard = try await richard.reload()
            let second = try await Self.addDevice(server, richard, name: "My second iPhone", operatingSystem: "IOS")
            let t = { (weekday: Int, hour: Int, minute: Int) in Self.at(1, weekday, hour, minute) }

            // The first phone: NU.nl sessions, and the classifier's news and social visits in and after the first one.
            try await Self.appActivity(server, richard, "NU.nl", t(1, 3, 15), t(1, 3, 35))
            try await Self.networkActivity(server, richard, "News", at: t(1, 3, 20))
            try await Self.networkActivity(server, richard, "News", at: t(1, 3, 40))
            try await Self.networkActivity(server, richard, "social", at: t(1, 3, 20))
            try await Self.networkActivity(server, richard, "social", at: t(1, 3, 42))
            try await Self.appActivity(server, richard, "NU.nl", t(1, 4, 15), t(1, 4, 35))
            try await Self.appActivity(server, richard, "NU.nl", t(1, 5, 15), t(1, 5, 35))
            // The second phone: partial overlap, full overlap, none, and the next day.
            try await Self.appActivity(server, second, "NU.nl", t(1, 4, 10), t(1, 4, 20))
            try await Self.appActivity(server, second, "NU.nl", t(1, 5, 20), t(1, 5, 30))
            try await Self.appActivity(server, second, "NU.nl", t(1, 6, 15), t(1, 6, 35))
            try await Self.appActivity(server, second, "NU.nl", t(2, 7, 53), t(2, 8, 11))

            // Monday's news: overlap counted once across sessions, phones and the classifier.
            let days = try await Self.get(server, richard.link("yona:dailyActivityReports"), richard, query: "?size=14")
            let list = Self.items(days, "yona:dayActivityOverviews")
            let mondayNews = try #require(
                Self.entry(list[Self.offset(1, 1)]["dayActivities"], goal: Self.asRequester(news, richard)))
            let detail = try await Self.get(server, value(mondayNews, "_links", "yona:dayDetails", "href") as? String, richard)
            let spread = try #require(detail["spread"] as? [Int])
            let expected: [Int: Int] = [13: 15, 14: 6, 16: 5, 17: 15, 18: 5, 21: 15, 22: 5, 25: 15, 26: 5]
            #expect(spread == (0..<96).map { expected[$0] ?? 0 })
            #expect(detail["totalActivityDurationMinutes"] as? Int == 86)
            #expect(detail["goalAccomplished"] as? Bool == false && detail["totalMinutesBeyondGoal"] as? Int == 86)
            let tuesdayNews = try #require(
                Self.entry(list[Self.offset(1, 2)]["dayActivities"], goal: Self.asRequester(news, richard)))
            #expect(tuesdayNews["totalMinutesBeyondGoal"] as? Int == 18)
            let mondaySocial = try #require(
                Self.entry(list[Self.offset(1, 1)]["dayActivities"], goal: Self.asRequester(social, richard)))
            #expect(mondaySocial["goalAccomplished"] as? Bool == true)
            let socialSpread = try #require(mondaySocial["spread"] as? [Int])
            #expect(socialSpread == (0..<96).map { [13: 1, 14: 1][$0] ?? 0 })

            // The raw activities: each session and each visit apart, with its phone.
            let phone = "Richard's iPhone"
            let other = "My second iPhone"
            #expect(
                try await Self.rawRows(server, richard, try Self.raw(richard, day: t(1, 0, 0), goal: news))
                    == [
                        Self.rawRow(t(1, 3, 15), t(1, 3, 35), app: "NU.nl", device: phone),
                        Self.rawRow(t(1, 3, 20), t(1, 3, 21), app: "", device: phone),
                        Self.rawRow(t(1, 3, 40), t(1, 3, 41), app: "", device: phone),
                        Self.rawRow(t(1, 4, 10), t(1, 4, 20), app: "NU.nl", device: other),
                        Self.rawRow(t(1, 4, 15), t(1, 4, 35), app: "NU.nl", device: phone),
                        Self.rawRow(t(1, 5, 15), t(1, 5, 35), app: "NU.nl", device: phone),
                        Self.rawRow(t(1, 5, 20), t(1, 5, 30), app: "NU.nl", device: other),
                        Self.rawRow(t(1, 6, 15), t(1, 6, 35), app: "NU.nl", device: other),
                    ])
            #expect(
                try await Self.rawRows(server, richard, try Self.raw(richard, day: t(1, 0, 0), goal: social))
                    == [Self.rawRow(t(1, 3, 20), t(1, 3, 21), app: "", device: phone), Self.rawRow(t(1, 3, 42), t(1, 3, 43), app: "", device: phone)])

            // Each phone's "last seen" is its own.
            let reloaded = try await richard.reload()
            let lastSeen = Dictionary(
                uniqueKeysWithValues: reloaded.devices.compactMap { device in
                    (device["name"] as? String).map { ($0, device["lastMonitoredActivityDate"] as? String) }
                })
            #expect(lastSeen[phone] == UserCalendar.day(t(1, 12, 0)) && lastSeen[other] == UserCalendar.day(t(2, 12, 0)))
        }
    }

    // MARK: Paging and goal removal

    /// The `yona:goal` href a report gives one of the user's own goals.
    /// As Yona's, a goal's own link already names the requester (`?requestingUserId=`); older hrefs get it added.
    static func asRequester(_ goal: String, _ app: YonaApp) -> String {
        goal.contains("requestingUserId=") ? goal : "\(goal)?requestingUserId=\(userID(app))"
    }

    /// `href` with one more query item.
    static func adding(_ item: String, to href: String) -> String { href + (href.contains("?") ? "&" : "?") + item }

    static func weekGoalCounts(_ page: [String: Any]) -> [Int] {
        items(page, "yona:weekActivityOverviews").map { ($0["weekActivities"] as? [Any])?.count ?? -1 }
    }

    static func href(_ item: [String: Any]?, _ rel: String) -> String? { value(item as Any, "_links", rel, "href") as? String }

    @Test("ActivityTest: Page through multiple weeks", arguments: TestDatabase.available)
    func activityTestPageThroughMultipleWeeks(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            richard = try await Self.date(server, richard, to: Self.at(6, 1, 2, 18))
            let news = Self.asRequester(try await Self.newsBudget(server, richard, at: Self.at(4, 1, 2, 18)), richard)
            richard = try await richard.reload()
            let weeksLink = try #require(richard.link("yona:weeklyActivityReports"))

            // Seven weeks, two a page: gambling all along, news from W-4 on.
            var pages: [[String: Any]] = []
            for number in 0..<4 { pages.append(try await Self.get(server, weeksLink, richard, query: "?page=\(number)")) }
            #expect(pages.map(Self.weekGoalCounts) == [[2, 2], [2, 2], [2, 1], [1]])
            #expect(pages.allSatisfy { value($0, "page", "totalElements") as? Int == 7 && value($0, "page", "size") as? Int == 2 })
            func newsWeek(_ page: Int, _ index: Int) -> String? {
                Self.href(Self.entry(Self.items(pages[page], "yona:weekActivityOverviews")[index]["weekActivities"], goal: news), "yona:weekDetails")
            }
            let w4 = try await Self.get(server, newsWeek(2, 0), richard)
            #expect(Self.href(w4, "prev") == nil && Self.href(w4, "next") == newsWeek(1, 1), "the goal's first week")
            let w3 = try await Self.get(server, newsWeek(1, 1), richard)
            #expect(Self.href(w3, "prev") == newsWeek(2, 0) && Self.href(w3, "next") == newsWeek(1, 0))
            let w0 = try await Self.get(server, newsWeek(0, 0), richard)
            #expect(Self.href(w0, "prev") == newsWeek(0, 1) && Self.href(w0, "next") == nil, "this week has no next")

            // Days: W-6 Monday to today; news from W-4 Monday.
            let newsDays = 6 + 7 * 3 + Self.currentWeekday + 1
            let totalDays = newsDays + 14
            let daysLink = try #require(richard.link("yona:dailyActivityReports"))
            for number in 0..<2 {
                let page = try await Self.get(server, daysLink, richard, query: "?page=\(number)")
                #expect(Self.items(page, "yona:dayActivityOverviews").count == 3 && value(page, "page", "totalElements") as? Int == totalDays)
            }
            let all = Self.items(try await Self.get(server, daysLink, richard, query: "?size=\(totalDays)"), "yona:dayActivityOverviews")
            try #require(all.count == totalDays)
            func newsDay(_ index: Int) -> String? { Self.href(Self.entry(all[index]["dayActivities"], goal: news), "yona:dayDetails") }
            #expect(newsDay(newsDays) == nil && newsDay(newsDays - 1) != nil, "news starts on W-4 Monday")
            let first = try await Self.get(server, newsDay(newsDays - 1), richard)
            #expect(Self.href(first, "prev") == nil && Self.href(first, "next") == newsDay(newsDays - 2))
            let yesterday = try await Self.get(server, newsDay(1), richard)
            #expect(Self.href(yesterday, "prev") == newsDay(2) && Self.href(yesterday, "next") == newsDay(0))
            let today = try await Self.get(server, newsDay(0), richard)
            #expect(Self.href(today, "prev") == newsDay(1) && Self.href(today, "next") == nil)
        }
    }

    @Test("ActivityTest: Remove goal after adding activities", arguments: TestDatabase.available)
    func activityTestRemoveGoalAfterAddingActivities(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            richard = try await Self.date(server, richard, to: Self.at(1, 1, 2, 18))
            let newsSelf = try await Self.newsBudget(server, richard, at: Self.at(1, 1, 2, 18))
            let news = Self.asRequester(newsSelf, richard)
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 1, 3, 15), Self.at(1, 1, 3, 35))
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 2, 8, 45), Self.at(1, 2, 9, 10))
            try await Self.appActivity(server, richard, "Facebook", Self.at(1, 2, 9, 35), Self.at(1, 2, 10, 10))
            let social = Self.asRequester(
                try await Self.addGoal(server, richard, Self.zones(server, GoalsTests.social, ["11:00-12:00"]), at: Self.at(1, 3, 13, 55)), richard)
            try await Self.networkActivity(server, richard, "social", at: Self.at(1, 3, 15, 0))
            try await Self.networkActivity(server, richard, "social", at: Self.at(1, 4, 11, 30))
            richard = try await richard.reload()
            let weeksLink = try #require(richard.link("yona:weeklyActivityReports"))
            let daysLink = try #require(richard.link("yona:dailyActivityReports"))
            let totalDays = 6 + Self.currentWeekday + 1

            // before: news and social with their figures
            var weeks = try await Self.get(server, weeksLink, richard)
            #expect(Self.weekGoalCounts(weeks) == [3, 3] && value(weeks, "page", "totalElements") as? Int == 2)
            let lastWeek = Self.items(weeks, "yona:weekActivityOverviews")[1]
            let newsWeek = try #require(Self.entry(lastWeek["weekActivities"], goal: news))
            #expect((newsWeek["dayActivities"] as? [String: Any])?.count == 6)
            let detail = try await Self.get(server, Self.href(newsWeek, "yona:weekDetails"), richard)
            #expect(detail["spread"] as? [Int] == (0..<96).map { [13: 15, 14: 5, 35: 15, 36: 10][$0] ?? 0 })
            #expect(detail["totalActivityDurationMinutes"] as? Int == 45)
            let socialWeek = try #require(Self.entry(lastWeek["weekActivities"], goal: social))
            let socialDays = try #require(socialWeek["dayActivities"] as? [String: [String: Any]])
            #expect(socialDays.count == 4, "Wednesday to Saturday")
            #expect(socialDays["WEDNESDAY"]?["goalAccomplished"] as? Bool == false && socialDays["WEDNESDAY"]?["totalMinutesBeyondGoal"] as? Int == 1)
            #expect(
                socialDays["THURSDAY"]?["goalAccomplished"] as? Bool == true && socialDays["THURSDAY"]?["totalActivityDurationMinutes"] as? Int == 1)

            // act: remove news
            let removed = try await server.request(.DELETE, Self.adding("message=bye", to: newsSelf), headers: richard.headers)
            #expect(removed.status == 204, "\(removed.text)")

            // after: news is gone from every week; the days still start at the account's creation
            weeks = try await Self.get(server, weeksLink, richard)
            #expect(Self.weekGoalCounts(weeks) == [2, 2] && value(weeks, "page", "totalElements") as? Int == 2)
            let socialAfter = Self.entry(Self.items(weeks, "yona:weekActivityOverviews")[1]["weekActivities"], goal: social)
            #expect((socialAfter?["dayActivities"] as? [String: Any])?.count == 4)
            var days = try await Self.get(server, daysLink, richard, query: "?size=14")
            #expect(Self.items(days, "yona:dayActivityOverviews").count == totalDays && value(days, "page", "totalElements") as? Int == totalDays)
            #expect(Self.items(days, "yona:dayActivityOverviews").allSatisfy { Self.entry($0["dayActivities"], goal: news) == nil })

            // news on the phone still answers 204, and counts for nothing
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 1, 3, 15), Self.at(1, 1, 3, 35))
            weeks = try await Self.get(server, weeksLink, richard)
            #expect(Self.weekGoalCounts(weeks) == [2, 2])
            days = try await Self.get(server, daysLink, richard, query: "?size=14")
            #expect(Self.items(days, "yona:dayActivityOverviews").count == totalDays)
        }
    }

    @Test("ActivityTest: Activity before goal creation should be ignored", arguments: TestDatabase.available)
    func activityTestActivityBeforeGoalCreationIsIgnored(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // Yona's addRichard: news made at once; then the account is dated back to W-1 Friday 14:00
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            _ = try await Self.newsBudget(server, richard, at: Date())
            richard = try await Self.date(server, richard, to: Self.at(1, 5, 14, 0))
            try await Self.networkActivity(server, richard, "YouTube", at: Self.at(2, 5, 9, 0))
            let multimedia = Self.asRequester(
                try await Self.addGoal(server, richard, Self.zones(server, Self.multimediaCategory, ["20:00-22:00"]), at: Self.at(1, 5, 14, 0)),
                richard)
            try await Self.networkActivity(server, richard, "YouTube", at: Self.at(1, 5, 15, 0))
            try await Self.networkActivity(server, richard, "YouTube", at: Self.at(1, 5, 21, 0))
            richard = try await richard.reload()

            let weeks = try await Self.get(server, richard.link("yona:weeklyActivityReports"), richard, query: "?size=2")
            #expect(Self.weekGoalCounts(weeks) == [3, 2], "news did not exist last week")
            let lastWeek = Self.entry(Self.items(weeks, "yona:weekActivityOverviews")[1]["weekActivities"], goal: multimedia)
            let lastWeekDays = try #require(lastWeek?["dayActivities"] as? [String: [String: Any]])
            #expect(Set(lastWeekDays.keys) == ["FRIDAY", "SATURDAY"])
            #expect(lastWeekDays["FRIDAY"]?["goalAccomplished"] as? Bool == false && lastWeekDays["FRIDAY"]?["totalMinutesBeyondGoal"] as? Int == 1)
            #expect(lastWeekDays["FRIDAY"]?["totalActivityDurationMinutes"] as? Int == 2, "the visit before the account counts for nothing")

            let totalDays = 2 + Self.currentWeekday + 1
            let days = Self.items(
                try await Self.get(server, richard.link("yona:dailyActivityReports"), richard, query: "?size=14"), "yona:dayActivityOverviews")
            #expect(days.count == totalDays)
            let friday = try #require(Self.entry(days[Self.offset(1, 5)]["dayActivities"], goal: multimedia))
            #expect(friday["spread"] as? [Int] == (0..<96).map { [60: 1, 84: 1][$0] ?? 0 })
            #expect((days[Self.offset(1, 5)]["dayActivities"] as? [Any])?.count == 2, "gambling and multimedia")
            let saturday = try #require(Self.entry(days[Self.offset(1, 6)]["dayActivities"], goal: multimedia))
            #expect(saturday["goalAccomplished"] as? Bool == true && saturday["totalActivityDurationMinutes"] as? Int == 0)
        }
    }

    @Test("ActivityTest: Richard retrieves buddy activity info before Bob accepted Richard's buddy request", arguments: TestDatabase.available)
    func activityTestBuddyInfoBeforeAcceptance(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            let bob = try await YonaApp.add(server, firstName: "Bob", nickname: "BD")
            let request = try await server.request(
                .POST, "\(try #require(YonaAssertions.stripped(richard.url)))/buddies/", headers: richard.headers,
                json: [
                    "_embedded": [
                        "yona:user": [
                            "firstName": "Bob", "lastName": "Dunn", "mobileNumber": try #require(bob.json["mobileNumber"] as? String),
                            "emailAddress": "bob@dunn.com",
                        ]
                    ],
                    "message": "Would you like to be my buddy?", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED",
                ])
            try #require(request.status == 201, "\(request.text)")
            richard = try await richard.reload()
            let buddies = value(richard.json, "_embedded", "yona:buddies", "_embedded", "yona:buddies") as? [[String: Any]] ?? []
            try #require(buddies.count == 1)
            #expect(Self.href(buddies[0], "yona:dailyActivityReports") == nil && Self.href(buddies[0], "yona:weeklyActivityReports") == nil)
            let withBuddies = try await Self.get(server, richard.link("yona:dailyActivityReportsWithBuddies"), richard, query: "&size=14")
            #expect(withBuddies["_embedded"] == nil)
        }
    }

    @Test(
        "ActivityTest: Richard's network activity is measured properly on different OSes and different budget goals",
        arguments: TestDatabase.available)
    func activityTestNetworkActivityPerOperatingSystemAndBudget(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // Android's own app measures app use, so the classifier's view counts there for no-go goals only.
            for (system, budget, counted) in [("ANDROID", 0, true), ("ANDROID", 60, false), ("IOS", 0, true), ("IOS", 60, true)] {
                var device = Self.iPhone
                device["deviceOperatingSystem"] = system
                device["deviceName"] = system == "ANDROID" ? "Richard's S8" : "Richard's iPhone"
                var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: device)
                _ = try await Self.newsBudget(server, richard, at: Date())
                richard = try await Self.date(server, richard, to: Self.at(1, 1, 2, 18))
                let social = Self.asRequester(
                    try await Self.addGoal(server, richard, Self.budget(server, GoalsTests.social, budget), at: Self.at(1, 1, 2, 18)), richard)
                richard = try await richard.reload()
                // two visits four minutes apart: one activity of 4 minutes (03:20 to 03:24)
                try await Self.networkActivity(server, richard, "social", at: Self.at(1, 1, 3, 20))
                try await Self.networkActivity(server, richard, "social", at: Self.at(1, 1, 3, 24))

                let minutes = counted ? 4 : 0
                let weeks = try await Self.get(server, richard.link("yona:weeklyActivityReports"), richard)
                #expect(Self.weekGoalCounts(weeks) == [3, 2], "\(system) \(budget)")
                let week = Self.entry(Self.items(weeks, "yona:weekActivityOverviews")[1]["weekActivities"], goal: social)
                #expect((week?["dayActivities"] as? [String: Any])?.count == 6)
                let detail = try await Self.get(server, Self.href(week, "yona:weekDetails"), richard)
                #expect(detail["spread"] as? [Int] == (0..<96).map { $0 == 13 ? minutes : 0 }, "\(system) \(budget)")
                #expect(detail["totalActivityDurationMinutes"] as? Int == minutes)
                let days = Self.items(
                    try await Self.get(server, richard.link("yona:dailyActivityReports"), richard, query: "?size=14"), "yona:dayActivityOverviews")
                #expect(days.count == 6 + Self.currentWeekday + 1)
                let monday = try #require(Self.entry(days[Self.offset(1, 1)]["dayActivities"], goal: social))
                #expect(monday["goalAccomplished"] as? Bool == (budget > 0), "\(system) \(budget)")
                #expect(monday["totalMinutesBeyondGoal"] as? Int == (budget > 0 ? 0 : minutes))
                #expect(monday["totalActivityDurationMinutes"] as? Int == minutes && monday["spread"] == nil)
            }
        }
    }

    /// Richard and Bob as buddies who share, as their apps see themselves.
    static func buddies(_ server: TestServer) async throws -> (richard: YonaApp, bob: YonaApp) {
        let richardUser = try await server.createUser(firstName: "Richard", nickname: "RQ", extra: Self.iPhone)
        let bobUser = try await server.createUser(firstName: "Bob", nickname: "BD", extra: Self.iPhone)
        try await BuddyTests.connect(server, richard: richardUser, bob: bobUser)
        _ = try await server.messages(richardUser)
        let richard = try await YonaApp(server: server, json: [:], password: richardUser.password)
            .reloaded(from: "\(server.baseURL)\(richardUser.profilePath)")
        let bob = try await YonaApp(server: server, json: [:], password: bobUser.password)
            .reloaded(from: "\(server.baseURL)\(bobUser.profilePath)")
        return (richard, bob)
    }

    static func timeZoneGoal(_ server: TestServer, _ app: YonaApp, category: String, zones: [String], at time: Date) async throws -> String {
        try await addGoal(server, app, Self.zones(server, category, zones), at: time)
    }

    @Test("ActivityTest: Richard's goals are only included when a buddy has that goal too", arguments: TestDatabase.available)
    func activityTestWithBuddiesShowsTheBuddiesCategories(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var (richard, bob) = try await Self.buddies(server)
            richard = try await Self.date(server, richard, to: Self.at(2, 1, 2, 18))
            bob = try await Self.date(server, bob, to: Self.at(2, 1, 2, 18))
            _ = try await Self.newsBudget(server, richard, at: Self.at(2, 1, 2, 18))
            _ = try await Self.newsBudget(server, bob, at: Self.at(2, 1, 2, 18))
            _ = try await Self.timeZoneGoal(server, richard, category: GoalsTests.social, zones: ["11:00-12:00"], at: Self.at(2, 4, 13, 55))
            _ = try await Self.timeZoneGoal(server, bob, category: Self.multimediaCategory, zones: ["20:00-22:00"], at: Self.at(2, 4, 13, 55))
            richard = try await richard.reload()

            let total = 6 + 7 + Self.currentWeekday + 1
            let page = try await Self.get(server, richard.link("yona:dailyActivityReportsWithBuddies"), richard, query: "&size=21")
            #expect(value(page, "page", "totalElements") as? Int == total && value(page, "page", "size") as? Int == 21)
            let days = Self.items(page, "yona:dayActivityOverviews")
            try #require(days.count == total)
            func users(_ weeksBack: Int, _ weekday: Int, _ category: String) -> Int? {
                let entry = (days[Self.offset(weeksBack, weekday)]["dayActivities"] as? [[String: Any]])?.first {
                    (value($0, "_links", "yona:activityCategory", "href") as? String)?.hasSuffix(category) == true
                }
                return (entry?["dayActivitiesForUsers"] as? [Any])?.count
            }
            for (weeksBack, weekday) in [(2, 1), (2, 4), (1, 0), (1, 1), (1, 6)] {
                #expect(users(weeksBack, weekday, GoalsTests.news) == 2, "news: Richard's and Bob's, W-\(weeksBack) \(weekday)")
            }
            for (weeksBack, weekday) in [(2, 4), (1, 1)] {
                #expect(users(weeksBack, weekday, GoalsTests.social) == nil, "only Richard has social: not shown")
                #expect(users(weeksBack, weekday, Self.multimediaCategory) == 1, "only Bob has multimedia")
            }
            #expect(users(2, 3, Self.multimediaCategory) == nil, "Bob's multimedia goal began on Thursday")
        }
    }

    @Test("ActivityTest: Richard retrieves buddy activity info before he processed Bob's disconnect", arguments: TestDatabase.available)
    func activityTestWithBuddiesAfterTheBuddyLeft(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let (richard, bob) = try await Self.buddies(server)
            let entry = try await Self.firstBuddy(server, bob)
            let edit = try #require(Self.href(entry, "edit"))
            let removed = try await server.request(
                .DELETE, "\(edit)\(edit.contains("?") ? "&" : "?")message=Sorry,%20I%20regret%20having%20asked%20you", headers: bob.headers)
            #expect(removed.status == 204, "\(removed.text)")
            let page = try await Self.get(server, richard.link("yona:dailyActivityReportsWithBuddies"), richard, query: "&size=14")
            #expect(page["_embedded"] == nil, "Richard no longer knows Bob's goals")
        }
    }

    // MARK: Reports read after later changes

    /// The day detail of `goal` on the day `weeksBack`/`weekday`, found through the day overviews as the apps find it.
    static func dayDetail(_ server: TestServer, _ app: YonaApp, goal: String, _ weeksBack: Int, _ weekday: Int) async throws -> [String: Any] {
        let days = items(try await get(server, app.link("yona:dailyActivityReports"), app, query: "?size=14"), "yona:dayActivityOverviews")
        let entry = try #require(Self.entry(days[offset(weeksBack, weekday)]["dayActivities"], goal: goal), "W-\(weeksBack) \(weekday)")
        return try await get(server, href(entry, "yona:dayDetails"), app)
    }

    static func spread(_ cells: [Int: Int]) -> [Int] { (0..<96).map { cells[$0] ?? 0 } }

    @Test(
        "ActivityTest: Add activity after retrieving the report; Add activity after retrieving the report with multiple days",
        arguments: TestDatabase.available)
    func activityTestActivityAfterTheReportWasRead(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            richard = try await Self.date(server, richard, to: Self.at(1, 1, 2, 18))
            let news = Self.asRequester(try await Self.newsBudget(server, richard, at: Self.at(1, 1, 2, 18)), richard)
            richard = try await richard.reload()
            // read everything first
            let before = try await Self.dayDetail(server, richard, goal: news, 1, 3)
            #expect(before["totalActivityDurationMinutes"] as? Int == 0 && before["goalAccomplished"] as? Bool == true)
            _ = try await Self.get(server, richard.link("yona:weeklyActivityReports"), richard)

            // a session on last Wednesday, and one of no length just now (a minute, as Yona counts it)
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 3, 3, 15), Self.at(1, 3, 3, 35))
            let now = Date().addingTimeInterval(-1)
            try await Self.appActivity(server, richard, "NU.nl", now, now)

            let wednesday = try await Self.dayDetail(server, richard, goal: news, 1, 3)
            #expect(wednesday["spread"] as? [Int] == Self.spread([13: 15, 14: 5]))
            #expect(wednesday["goalAccomplished"] as? Bool == false && wednesday["totalMinutesBeyondGoal"] as? Int == 20)
            let weeks = try await Self.get(server, richard.link("yona:weeklyActivityReports"), richard)
            let lastWeek = try #require(Self.entry(Self.items(weeks, "yona:weekActivityOverviews")[1]["weekActivities"], goal: news))
            let weekDetail = try await Self.get(server, Self.href(lastWeek, "yona:weekDetails"), richard)
            #expect(weekDetail["totalActivityDurationMinutes"] as? Int == 20 && (weekDetail["dayActivities"] as? [String: Any])?.count == 6)
            let today = try await Self.dayDetail(server, richard, goal: news, 0, Self.currentWeekday)
            #expect(today["totalActivityDurationMinutes"] as? Int == 1 && today["totalMinutesBeyondGoal"] as? Int == 1)
            #expect(today["spread"] as? [Int] == Self.spread([UserCalendar.minuteOfDay(now) / 15: 1]))
        }
    }

    @Test(
        "ActivityTest: Add goals and fetch activities; Retrieve inactive activity report current day/week before and after update of time zone goal; … of budget goal",
        arguments: TestDatabase.available)
    func activityTestReportsAfterGoalsAreAddedAndChanged(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            _ = try await Self.newsBudget(server, richard, at: Date())
            func readBoth() async throws -> [Int] {
                let days = try await Self.get(server, richard.link("yona:dailyActivityReports"), richard)
                let weeks = try await Self.get(server, richard.link("yona:weeklyActivityReports"), richard)
                return [days, weeks].map { page in
                    (Self.items(page, "yona:dayActivityOverviews") + Self.items(page, "yona:weekActivityOverviews")).first.flatMap {
                        (($0["dayActivities"] ?? $0["weekActivities"]) as? [Any])?.count
                    } ?? -1
                }
            }
            let multimedia = try await Self.timeZoneGoal(server, richard, category: Self.multimediaCategory, zones: ["11:00-12:00"], at: Date())
            #expect(try await readBoth() == [3, 3])
            let communication = try await Self.addGoal(server, richard, Self.budget(server, Self.communicationCategory, 60), at: Date())
            #expect(try await readBoth() == [4, 4])
            richard = try await richard.reload()
            try await Self.update(server, richard, multimedia, Self.zones(server, Self.multimediaCategory, ["13:00-14:00"]), at: Date())
            #expect(try await readBoth() == [4, 4], "today shows the version in force at its end: one entry per goal")
            try await Self.update(server, richard, communication, Self.budget(server, Self.communicationCategory, 81), at: Date())
            #expect(try await readBoth() == [4, 4])
        }
    }

    @Test("ActivityTest: Retrieve inactive activity report past week, after goal update in earlier week", arguments: TestDatabase.available)
    func activityTestPastWeeksAfterAGoalUpdateInAnEarlierWeek(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            _ = try await Self.newsBudget(server, richard, at: Date())
            richard = try await Self.date(server, richard, to: Self.at(2, 2, 13, 30))
            let goal = try await Self.addGoal(server, richard, Self.budget(server, Self.multimediaCategory, 60), at: Self.at(2, 2, 13, 30))
            try await Self.update(server, richard, goal, Self.budget(server, Self.multimediaCategory, 81), at: Self.at(1, 1, 18, 30))
            richard = try await richard.reload()
            let versions = richard.goals.filter { (Self.href($0, "yona:activityCategory"))?.hasSuffix(Self.multimediaCategory) == true }
            let beforeSelf = try #require(versions.first { $0["historyItem"] as? Bool == true }.flatMap { Self.href($0, "self") })
            let afterSelf = try #require(versions.first { $0["historyItem"] as? Bool != true }.flatMap { Self.href($0, "self") })
            let (before, after) = (Self.asRequester(beforeSelf, richard), Self.asRequester(afterSelf, richard))

            let weeks = try await Self.get(server, richard.link("yona:weeklyActivityReports"), richard, query: "?size=3")
            #expect(Self.weekGoalCounts(weeks) == [3, 2, 2] && value(weeks, "page", "totalElements") as? Int == 3)
            let list = Self.items(weeks, "yona:weekActivityOverviews")
            let twoWeeksAgo = try #require(Self.entry(list[2]["weekActivities"], goal: before), "W-2 is the old version's")
            #expect((twoWeeksAgo["dayActivities"] as? [String: Any])?.count == 5, "Tuesday to Saturday")
            let lastWeek = try #require(Self.entry(list[1]["weekActivities"], goal: after), "W-1 is the new version's")
            #expect((lastWeek["dayActivities"] as? [String: Any])?.count == 7)
            let detail = try await Self.get(server, Self.href(lastWeek, "yona:weekDetails"), richard)
            #expect((detail["dayActivities"] as? [String: Any])?.count == 7 && detail["totalActivityDurationMinutes"] as? Int == 0)

            let total = 5 + 7 + Self.currentWeekday + 1
            let days = Self.items(
                try await Self.get(server, richard.link("yona:dailyActivityReports"), richard, query: "?size=21"), "yona:dayActivityOverviews")
            #expect(days.count == total)
            #expect(Self.entry(days[Self.offset(2, 2)]["dayActivities"], goal: before) != nil)
            #expect(Self.entry(days[Self.offset(1, 0)]["dayActivities"], goal: before) != nil, "Sunday: still the old version")
            #expect(Self.entry(days[Self.offset(1, 1)]["dayActivities"], goal: after) != nil, "the day of the change is the new version's")
            #expect(Self.entry(days[Self.offset(1, 1)]["dayActivities"], goal: before) == nil)
        }
    }

    @Test(
        "ActivityAggregationBatchJobTest: Aggregation is reset and repeated when posting new continuing app activity; … outside combine interval",
        arguments: TestDatabase.available)
    func activityAcrossMidnightCountsOnBothDays(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            richard = try await Self.date(server, richard, to: Self.at(1, 1, 2, 18))
            let news = Self.asRequester(try await Self.newsBudget(server, richard, at: Self.at(1, 1, 2, 18)), richard)
            richard = try await richard.reload()
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 1, 23, 0), Self.at(1, 1, 23, 49))
            #expect(try await Self.dayDetail(server, richard, goal: news, 1, 1)["spread"] as? [Int] == Self.spread([92: 15, 93: 15, 94: 15, 95: 4]))
            // the session goes on past midnight
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 1, 23, 49), Self.at(1, 2, 0, 5))
            let monday = try await Self.dayDetail(server, richard, goal: news, 1, 1)
            #expect(monday["spread"] as? [Int] == Self.spread([92: 15, 93: 15, 94: 15, 95: 15]) && monday["totalMinutesBeyondGoal"] as? Int == 60)
            let tuesday = try await Self.dayDetail(server, richard, goal: news, 1, 2)
            #expect(tuesday["spread"] as? [Int] == Self.spread([0: 5]) && tuesday["totalMinutesBeyondGoal"] as? Int == 5)
            // two sessions with a pause: each counts its own minutes
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 3, 23, 0), Self.at(1, 3, 23, 5))
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 3, 23, 50), Self.at(1, 3, 23, 59))
            let wednesday = try await Self.dayDetail(server, richard, goal: news, 1, 3)
            #expect(wednesday["spread"] as? [Int] == Self.spread([92: 5, 95: 9]) && wednesday["totalMinutesBeyondGoal"] as? Int == 14)
        }
    }

    static let communicationCategory = "90b9838f-1430-484b-94c1-e169318091cb"

    @Test("ActivityTest: Richard sees buddy activities from the date they befriended", arguments: TestDatabase.available)
    func activityTestBuddyActivitiesFromTheDateTheyBefriended(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var (richard, bob) = try await Self.buddies(server)
            richard = try await Self.date(server, richard, to: Self.at(2, 2, 15, 34))
            _ = try await Self.newsBudget(server, richard, at: Self.at(2, 2, 15, 34))
            bob = try await Self.date(server, bob, to: Self.at(1, 3, 11, 5))
            let bobNews = try await Self.newsBudget(server, bob, at: Self.at(1, 3, 11, 5))
            // Richard's relation with Bob dates from last Thursday
            let entry = try await Self.firstBuddy(server, richard)
            let buddySelf = try #require(Self.href(entry, "self"))
            let redated = try await server.request(
                .PUT, try #require(Self.href(entry, "edit") ?? Self.href(entry, "self")), headers: richard.headers,
                json: ["lastStatusChangeTime": YonaDateFormat.timestamp(Self.at(1, 4, 11, 7))])
            #expect(redated.status == 200, "\(redated.text)")
            try await Self.appActivity(server, bob, "NU.nl", Self.at(1, 5, 15, 7), Self.at(1, 5, 15, 37))
            richard = try await richard.reload()

            // Bob's days and weeks from that Thursday on; his Friday's news
            let bobGoals = try #require(
                value(entry, "_embedded", "yona:user", "_embedded", "yona:goals", "_embedded", "yona:goals") as? [[String: Any]])
            let bobGambling = try #require(
                bobGoals.first { Self.href($0, "yona:activityCategory")?.hasSuffix(GoalsTests.gambling) == true }.flatMap { Self.href($0, "self") })
            let bobNewsID = try #require(Self.lastPathSegment(bobNews))
            let bobGamblingID = try #require(Self.lastPathSegment(bobGambling))
            let days = Self.items(try await Self.get(server, "\(buddySelf)/activity/days/", richard, query: "?size=100"), "yona:dayActivityOverviews")
            #expect(days.count == 4 + Self.currentWeekday)
            let weeks = try await Self.get(server, "\(buddySelf)/activity/weeks/", richard, query: "?size=100")
            #expect(Self.weekGoalCounts(weeks) == [2, 2])
            let friday = try await Self.get(
                server, "\(buddySelf)/activity/days/\(UserCalendar.day(Self.at(1, 5, 12, 0)))/details/\(bobNewsID)", richard)
            #expect(friday["spread"] as? [Int] == Self.spread([60: 8, 61: 15, 62: 7]) && friday["totalMinutesBeyondGoal"] as? Int == 30)
            #expect(Self.href(friday, "yona:buddy") == buddySelf)

            // with buddies: from the relation's date; news holds Bob's day only from then on
            let withBuddies = try #require(richard.link("yona:dailyActivityReportsWithBuddies"))
            let overview = Self.items(try await Self.get(server, withBuddies, richard, query: "&size=100"), "yona:dayActivityOverviews")
            #expect(overview.count == 4 + Self.currentWeekday)
            let thursday = (overview[Self.offset(1, 4)]["dayActivities"] as? [[String: Any]])?.first {
                Self.href($0, "yona:activityCategory")?.hasSuffix(GoalsTests.news) == true
            }
            #expect((thursday?["dayActivitiesForUsers"] as? [Any])?.count == 2)

            // too early, each 400: before the account, before the relation, another user's goal on one's own URL
            let own = try #require(YonaAssertions.stripped(richard.url))
            let ownGambling = try #require(
                richard.goals.first { Self.href($0, "yona:activityCategory")?.hasSuffix(GoalsTests.gambling) == true }.flatMap {
                    Self.lastPathSegment(Self.href($0, "self"))
                })
            let ownMonday = UserCalendar.day(Self.at(2, 1, 12, 0))
            let bobWednesday = UserCalendar.day(Self.at(1, 3, 12, 0))
            let ownWeek = UserCalendar.week(UserCalendar.weekStart(Self.at(3, 1, 12, 0)))
            let bobWeek = UserCalendar.week(UserCalendar.weekStart(Self.at(2, 3, 12, 0)))
            let (base, query) = try #require(withBuddies.split(separator: "?", maxSplits: 1).map(String.init).tuple)
            for path in [
                "\(own)/activity/days/\(ownMonday)", "\(own)/activity/days/\(ownMonday)/details/\(ownGambling)",
                "\(own)/activity/days/\(ownMonday)/details/\(bobNewsID)", "\(buddySelf)/activity/days/\(bobWednesday)",
                "\(buddySelf)/activity/days/\(bobWednesday)/details/\(bobGamblingID)", "\(own)/activity/weeks/\(ownWeek)",
                "\(own)/activity/weeks/\(ownWeek)/details/\(ownGambling)", "\(buddySelf)/activity/weeks/\(bobWeek)",
                "\(buddySelf)/activity/weeks/\(bobWeek)/details/\(bobGamblingID)", "\(base)\(ownMonday)?\(query)",
            ] {
                let answer = try await server.request(.GET, path, headers: richard.headers)
                #expect(answer.status == 400, "\(path): \(answer.status) \(answer.text)")
            }
        }
    }

    /// Yona's `updateBudgetGoal` / `updateTimeZoneGoal`: the goal's new value from `time` on.
    static func update(_ server: TestServer, _ app: YonaApp, _ goal: String, _ body: [String: Any], at time: Date) async throws {
        var body = body
        body["creationTime"] = YonaDateFormat.timestamp(time)
        let updated = try await server.request(.PUT, goal, headers: app.headers, json: body)
        try #require(updated.status == 200, "\(updated.text)")
    }

    static func budget(_ server: TestServer, _ category: String, _ minutes: Int) -> [String: Any] {
        [
            "@type": "BudgetGoal", "maxDurationMinutes": minutes,
            "_links": ["yona:activityCategory": ["href": "\(server.baseURL)/activityCategories/\(category)"]],
        ]
    }

    static func zones(_ server: TestServer, _ category: String, _ zones: [String]) -> [String: Any] {
        ["@type": "TimeZoneGoal", "zones": zones, "_links": ["yona:activityCategory": ["href": "\(server.baseURL)/activityCategories/\(category)"]]]
    }

    /// The id of a goal's earlier version (its history item) and of the goal itself, as the owner's app lists them.
    static func versionIDs(_ app: YonaApp, category: String) -> (before: String?, after: String?) {
        let versions = app.goals.filter { href($0, "yona:activityCategory")?.hasSuffix(category) == true }
        func id(_ goal: [String: Any]?) -> String? { lastPathSegment(href(goal, "self")).map(String.init) }
        return (id(versions.first { $0["historyItem"] as? Bool == true }), id(versions.first { $0["historyItem"] as? Bool != true }))
    }

    /// The entry of a goal version in a day or week item, by the version's id.
    static func entry(_ list: Any?, id: String?) -> [String: Any]? {
        guard let id else { return nil }
        return (list as? [[String: Any]])?.first { href($0, "yona:goal")?.contains("/goals/\(id)") == true }
    }

    /// Yona's 'Retrieve activity report after goal update' set-up: two weeks of Richard's and Bob's activity with goal
    /// updates in between (news to a 60-minute budget on W-1 Wednesday, social zones widened, Bob's multimedia zones
    /// and social budget changed). Returns both apps reloaded and the self link of Richard's news goal.
    static func goalUpdateScenario(_ server: TestServer, relationsFromBobsStart: Bool) async throws -> (YonaApp, YonaApp, String) {
        var (richard, bob) = try await Self.buddies(server)
        _ = try await Self.newsBudget(server, bob, at: Date()) // Yona's addBob: news from now on
        richard = try await Self.date(server, richard, to: Self.at(2, 1, 2, 18))
        bob = try await Self.date(server, bob, to: Self.at(2, 4, 18, 0))
        if relationsFromBobsStart {
            // Yona's updateLastStatusChangeTime on both sides: they share from W-2 Thursday 18:00
            for app in [richard, bob] {
                let entry = try await Self.firstBuddy(server, app)
                let redated = try await server.request(
                    .PUT, try #require(Self.href(entry, "edit") ?? Self.href(entry, "self")), headers: app.headers,
                    json: ["lastStatusChangeTime": YonaDateFormat.timestamp(Self.at(2, 4, 18, 0))])
                try #require(redated.status == 200, "\(redated.text)")
            }
        }
        // two weeks ago
        let richardNews = try await Self.newsBudget(server, richard, at: Self.at(2, 1, 2, 18))
        try await Self.appActivity(server, richard, "NU.nl", Self.at(2, 1, 3, 15), Self.at(2, 1, 3, 35))
        try await Self.appActivity(server, richard, "NU.nl", Self.at(2, 2, 8, 45), Self.at(2, 2, 9, 10))
        try await Self.appActivity(server, richard, "Facebook", Self.at(2, 2, 9, 35), Self.at(2, 2, 10, 10))
        let bobSocial = try await Self.addGoal(server, bob, Self.budget(server, GoalsTests.social, 180), at: Self.at(2, 4, 18, 0))
        try await Self.appActivity(server, bob, "Facebook", Self.at(2, 4, 20, 0), Self.at(2, 4, 20, 35))
        try await Self.networkActivity(server, bob, "YouTube", at: Self.at(2, 5, 9, 0))
        let bobMultimedia = try await Self.addGoal(
            server, bob, Self.zones(server, Self.multimediaCategory, ["20:00-22:00"]), at: Self.at(2, 5, 14, 0))
        try await Self.networkActivity(server, bob, "YouTube", at: Self.at(2, 5, 15, 0))
        try await Self.networkActivity(server, bob, "YouTube", at: Self.at(2, 5, 21, 0))
        // last week, with goal updates in between
        try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 3, 9, 13), Self.at(1, 3, 10, 7))
        try await Self.update(server, richard, richardNews, Self.budget(server, GoalsTests.news, 60), at: Self.at(1, 3, 20, 51))
        try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 3, 21, 43), Self.at(1, 3, 22, 1))
        let richardSocial = try await Self.addGoal(
            server, richard, Self.zones(server, GoalsTests.social, ["11:00-12:00"]), at: Self.at(1, 4, 13, 55))
        try await Self.networkActivity(server, richard, "social", at: Self.at(1, 4, 15, 0))
        try await Self.update(
            server, richard, richardSocial, Self.zones(server, GoalsTests.social, ["11:00-12:00", "17:30-21:30"]), at: Self.at(1, 5, 12, 3))
        try await Self.appActivity(server, bob, "com.google.android.youtube", Self.at(1, 5, 10, 13), Self.at(1, 5, 10, 35))
        try await Self.update(
            server, bob, bobMultimedia, Self.zones(server, Self.multimediaCategory, ["10:00-11:00", "20:00-22:00"]), at: Self.at(1, 5, 12, 3))
        try await Self.appActivity(server, bob, "com.google.android.youtube", Self.at(1, 5, 21, 43), Self.at(1, 5, 21, 59))
        try await Self.appActivity(server, richard, "Facebook", Self.at(1, 6, 20, 43), Self.at(1, 6, 21, 1))
        try await Self.update(server, bob, bobSocial, Self.budget(server, GoalsTests.social, 120), at: Self.at(1, 6, 20, 51))
        try await Self.appActivity(server, bob, "Facebook", Self.at(1, 6, 20, 55), Self.at(1, 6, 22, 0))
        return (try await richard.reload(), try await bob.reload(), richardNews)
    }

    @Test("ActivityTest: Delete goal after update", arguments: TestDatabase.available)
    func activityTestDeleteGoalAfterUpdate(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var (richard, _, richardNews) = try await Self.goalUpdateScenario(server, relationsFromBobsStart: true)
            let social = Self.versionIDs(richard, category: GoalsTests.social)
            // act: remove news (the current version; its history goes with it)
            let removed = try await server.request(.DELETE, Self.adding("message=bye", to: richardNews), headers: richard.headers)
            #expect(removed.status == 204, "\(removed.text)")
            richard = try await richard.reload()
            #expect(Self.versionIDs(richard, category: GoalsTests.news) == (nil, nil))

            let weeks = try await Self.get(server, richard.link("yona:weeklyActivityReports"), richard, query: "?size=3")
            #expect(Self.weekGoalCounts(weeks) == [2, 2, 1], "gambling and social; two weeks ago gambling alone")
            let socialWeek = try #require(Self.entry(Self.items(weeks, "yona:weekActivityOverviews")[1]["weekActivities"], id: social.after))
            let socialDays = try #require(socialWeek["dayActivities"] as? [String: [String: Any]])
            #expect(Set(socialDays.keys) == ["THURSDAY", "FRIDAY", "SATURDAY"])
            #expect(
                socialDays["THURSDAY"]?["totalMinutesBeyondGoal"] as? Int == 1
                    && socialDays["SATURDAY"]?["totalActivityDurationMinutes"] as? Int == 18)
            let days = Self.items(
                try await Self.get(server, richard.link("yona:dailyActivityReports"), richard, query: "?size=21"), "yona:dayActivityOverviews")
            #expect(days.count == 6 + 7 + Self.currentWeekday + 1, "the account's days are unchanged by the deletion")
            #expect((days[Self.offset(2, 1)]["dayActivities"] as? [Any])?.count == 1, "W-2 Monday: gambling only")
            #expect((days[Self.offset(1, 4)]["dayActivities"] as? [Any])?.count == 2, "W-1 Thursday: gambling and social")
            // side by side from the day they share (W-2 Thursday)
            let together = try await Self.get(server, richard.link("yona:dailyActivityReportsWithBuddies"), richard, query: "&size=21")
            let sharingDays = 3 + 7 + Self.currentWeekday + 1
            #expect(
                value(together, "page", "totalElements") as? Int == sharingDays
                    && Self.items(together, "yona:dayActivityOverviews").count == sharingDays)
        }
    }

    @Test(
        "ActivityTest: Retrieve activity report after goal update (both buddies' goals, buddy reports, with buddies)",
        arguments: TestDatabase.available)
    func activityTestReportsAfterGoalUpdatesOfBothBuddies(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let (richard, bob, _) = try await Self.goalUpdateScenario(server, relationsFromBobsStart: false)
            let news = Self.versionIDs(richard, category: GoalsTests.news)
            let social = Self.versionIDs(richard, category: GoalsTests.social)
            let bobsSocial = Self.versionIDs(bob, category: GoalsTests.social)
            let bobsMultimedia = Self.versionIDs(bob, category: Self.multimediaCategory)
            try #require([news, social, bobsSocial, bobsMultimedia].allSatisfy { $0.before != nil && $0.after != nil })

            // Richard's weeks: the change day (Wednesday) is judged wholly by the new budget: 54 + 18 minutes, 12 beyond 60
            let weeks = try await Self.get(server, richard.link("yona:weeklyActivityReports"), richard, query: "?size=3")
            #expect(Self.weekGoalCounts(weeks) == [3, 3, 2] && value(weeks, "page", "totalElements") as? Int == 3)
            let lastWeek = Self.items(weeks, "yona:weekActivityOverviews")[1]
            let newsWeek = try #require(Self.entry(lastWeek["weekActivities"], id: news.after), "W-1 under the version in force at its end")
            let newsDetail = try await Self.get(server, Self.href(newsWeek, "yona:weekDetails"), richard)
            #expect(newsDetail["spread"] as? [Int] == Self.spread([36: 2, 37: 15, 38: 15, 39: 15, 40: 7, 86: 2, 87: 15, 88: 1]))
            #expect(newsDetail["totalActivityDurationMinutes"] as? Int == 72 && (newsDetail["dayActivities"] as? [String: Any])?.count == 7)
            let newsDays = try #require(newsWeek["dayActivities"] as? [String: [String: Any]])
            #expect(newsDays["WEDNESDAY"]?["goalAccomplished"] as? Bool == false && newsDays["WEDNESDAY"]?["totalMinutesBeyondGoal"] as? Int == 12)
            let socialWeek = try #require(Self.entry(lastWeek["weekActivities"], id: social.after))
            let socialDays = try #require(socialWeek["dayActivities"] as? [String: [String: Any]])
            #expect(Set(socialDays.keys) == ["THURSDAY", "FRIDAY", "SATURDAY"])
            #expect(socialDays["THURSDAY"]?["goalAccomplished"] as? Bool == false && socialDays["THURSDAY"]?["totalMinutesBeyondGoal"] as? Int == 1)
            #expect(
                socialDays["SATURDAY"]?["goalAccomplished"] as? Bool == true && socialDays["SATURDAY"]?["totalActivityDurationMinutes"] as? Int == 18)

            // Richard's days: each under the version in force at its end
            let total = 6 + 7 + Self.currentWeekday + 1
            let days = Self.items(
                try await Self.get(server, richard.link("yona:dailyActivityReports"), richard, query: "?size=21"), "yona:dayActivityOverviews")
            #expect(days.count == total)
            #expect(Self.entry(days[Self.offset(1, 2)]["dayActivities"], id: news.before) != nil, "Tuesday: the old budget")
            #expect(Self.entry(days[Self.offset(1, 3)]["dayActivities"], id: news.after) != nil, "Wednesday: the new one")
            let monday = try #require(Self.entry(days[Self.offset(2, 1)]["dayActivities"], id: news.before))
            #expect(monday["totalMinutesBeyondGoal"] as? Int == 20)
            let saturday = try #require(Self.entry(days[Self.offset(1, 6)]["dayActivities"], id: social.after))
            #expect(saturday["spread"] as? [Int] == Self.spread([82: 2, 83: 15, 84: 1]))

            // Bob's, as Richard sees them
            let buddy = try await Self.firstBuddy(server, richard)
            let bobWeeks = Self.items(
                try await Self.get(server, Self.href(buddy, "yona:weeklyActivityReports"), richard, query: "?size=3"), "yona:weekActivityOverviews")
            try #require(bobWeeks.count == 3)
            let before = try await Self.get(
                server, Self.href(Self.entry(bobWeeks[2]["weekActivities"], id: bobsSocial.before), "yona:weekDetails"), richard)
            #expect(before["spread"] as? [Int] == Self.spread([80: 15, 81: 15, 82: 5]) && before["totalActivityDurationMinutes"] as? Int == 35)
            #expect((before["dayActivities"] as? [String: Any])?.count == 3 && Self.href(before, "yona:buddy") != nil)
            let after = try await Self.get(
                server, Self.href(Self.entry(bobWeeks[1]["weekActivities"], id: bobsSocial.after), "yona:weekDetails"), richard)
            #expect(
                after["spread"] as? [Int] == Self.spread([83: 5, 84: 15, 85: 15, 86: 15, 87: 15])
                    && after["totalActivityDurationMinutes"] as? Int == 65)
            #expect((after["dayActivities"] as? [String: Any])?.count == 7)
            let bobDays = Self.items(
                try await Self.get(server, Self.href(buddy, "yona:dailyActivityReports"), richard, query: "?size=21"), "yona:dayActivityOverviews")
            let bobFriday = try #require(Self.entry(bobDays[Self.offset(1, 5)]["dayActivities"], id: bobsMultimedia.after))
            #expect(bobFriday["goalAccomplished"] as? Bool == true, "judged by the zones in force at the day's end")
            #expect(bobFriday["spread"] as? [Int] == Self.spread([40: 2, 41: 15, 42: 5, 86: 2, 87: 14]))
            let bobEarlierFriday = try #require(Self.entry(bobDays[Self.offset(2, 5)]["dayActivities"], id: bobsMultimedia.before))
            #expect(bobEarlierFriday["totalActivityDurationMinutes"] as? Int == 2, "the visit before the goal counts for nothing")
            #expect(bobEarlierFriday["totalMinutesBeyondGoal"] as? Int == 1)

            // side by side: the categories of Bob's goals, with Richard where he has one too
            let together = Self.items(
                try await Self.get(server, richard.link("yona:dailyActivityReportsWithBuddies"), richard, query: "&size=21"),
                "yona:dayActivityOverviews")
            #expect(together.count == total)
            func users(_ weeksBack: Int, _ weekday: Int, _ category: String) -> Int? {
                let entry = (together[Self.offset(weeksBack, weekday)]["dayActivities"] as? [[String: Any]])?.first {
                    Self.href($0, "yona:activityCategory")?.hasSuffix(category) == true
                }
                return (entry?["dayActivitiesForUsers"] as? [Any])?.count
            }
            #expect(users(1, 3, GoalsTests.social) == 1 && users(1, 4, GoalsTests.social) == 2)
            #expect(users(2, 4, Self.multimediaCategory) == nil && users(2, 5, Self.multimediaCategory) == 1)
            #expect(users(2, 1, GoalsTests.news) == 1, "Bob has news (from today): the category shows, with Richard's day alone")
        }
    }

    @Test(
        "RemoveUserTest: Remove Richard while being a buddy of Bob and verify that Bob can move on with everything", arguments: TestDatabase.available
    )
    func removeUserTestBobMovesOnWithEverything(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var (richard, bob) = try await Self.buddies(server)
            richard = try await Self.date(server, richard, to: Self.at(1, 1, 2, 18))
            bob = try await Self.date(server, bob, to: Self.at(1, 1, 2, 18))
            let richardNews = try await Self.newsBudget(server, richard, at: Self.at(1, 1, 2, 18))
            let bobNews = try await Self.newsBudget(server, bob, at: Self.at(1, 1, 2, 18))
            richard = try await richard.reload()
            bob = try await bob.reload()
            // every kind of message between them: a conflict, a goal change, a comment each way, a nickname change
            try await Self.networkActivity(server, richard, "news/media", at: Date().addingTimeInterval(-60))
            _ = try await Self.timeZoneGoal(server, richard, category: GoalsTests.social, zones: ["11:00-12:00"], at: Date())
            for (app, goal) in [(bob, richardNews), (richard, bobNews)] {
                let buddy = try await Self.firstBuddy(server, app)
                let goalID = try #require(Self.lastPathSegment(goal))
                let details = try await Self.get(
                    server, "\(try #require(Self.href(buddy, "self")))/activity/days/\(UserCalendar.day(Self.at(1, 2, 12, 0)))/details/\(goalID)", app
                )
                let commented = try await server.request(
                    .POST, try #require(Self.href(details, "yona:addComment")), headers: app.headers, json: ["message": "Hi, everything OK?"])
                #expect(commented.status == 200, "\(commented.text)")
            }
            let edit = try #require(richard.link("edit"))
            var renamed: [String: Any] = ["nickname": "Richardo"]
            for key in ["firstName", "lastName", "mobileNumber"] { renamed[key] = richard.json[key] }
            #expect(try await server.request(.PUT, edit, headers: richard.headers, json: renamed).status == 200)

            // act: Richard leaves
            let farewell = "Goodbye friends! I deinstalled the Internet"
            let deleted = try await server.request(
                .DELETE,
                "\(try #require(YonaAssertions.stripped(richard.url)))?message=\(farewell.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!)",
                headers: richard.headers)
            #expect(deleted.status == 204, "\(deleted.text)")

            // Bob's phone is still monitored, Richard's no longer exists
            try await Self.networkActivity(server, bob, "Gambling", at: Date().addingTimeInterval(-30))
            let login = try #require(value(richard.requestingDevice, "vpnProfile", "vpnLoginID") as? String).split(separator: "$")
            let orphan = try await server.postNetworkActivity(
                String(login[0]), deviceIndex: Int(login[1])!, categories: ["news/media"], url: "http://www.refdag.nl")
            #expect(orphan.status == 400)

            // Bob's inbox: the disconnect with Richard's last words and his own conflict, nothing else of Richard's
            let inbox = try await Self.get(server, bob.link("yona:messages"), bob)
            let messages = value(inbox, "_embedded", "yona:messages") as? [[String: Any]] ?? []
            #expect(Set(messages.compactMap { $0["@type"] as? String }) == ["BuddyDisconnectMessage", "GoalConflictMessage"], "\(messages)")
            #expect(messages.count == 2)
            let disconnect = messages.first { $0["@type"] as? String == "BuddyDisconnectMessage" }
            #expect(disconnect?["reason"] as? String == "USER_ACCOUNT_DELETED" && disconnect?["message"] as? String == farewell)
            #expect(disconnect?["nickname"] as? String == "Richardo" && Self.href(disconnect, "yona:process") == nil)
            let conflict = messages.first { $0["@type"] as? String == "GoalConflictMessage" }
            #expect(conflict?["nickname"] as? String == "BD (me)")
            let buddies = try await Self.get(server, value(bob.json, "_embedded", "yona:buddies", "_links", "self", "href") as? String, bob)
            #expect((value(buddies, "_embedded", "yona:buddies") as? [Any] ?? []).isEmpty)
        }
    }

    @Test("DeviceManagementTest: Richard deletes a devices on which activities were done", arguments: TestDatabase.available)
    func deviceManagementTestActivitiesOutliveTheirDevice(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ", device: Self.iPhone)
            richard = try await Self.date(server, richard, to: Self.at(1, 1, 2, 18))
            let news = Self.asRequester(try await Self.newsBudget(server, richard, at: Self.at(1, 1, 2, 18)), richard)
            richard = try await richard.reload()
            let second = try await Self.addDevice(server, richard, name: "Second device", operatingSystem: "ANDROID")
            try await Self.appActivity(server, second, "NU.nl", Self.at(1, 1, 3, 15), Self.at(1, 1, 3, 35))

            let edit = try #require(Self.href(second.requestingDevice, "edit"))
            let removed = try await server.request(.DELETE, edit, headers: second.headers)
            #expect(removed.status == 204, "\(removed.text)")

            richard = try await richard.reload()
            #expect(richard.devices.count == 1 && richard.devices.first?["name"] as? String == "Richard's iPhone")
            let weeks = try await Self.get(server, richard.link("yona:weeklyActivityReports"), richard)
            #expect(Self.weekGoalCounts(weeks) == [2, 2])
            let lastWeek = try #require(Self.entry(Self.items(weeks, "yona:weekActivityOverviews")[1]["weekActivities"], goal: news))
            let days = try #require(lastWeek["dayActivities"] as? [String: [String: Any]])
            #expect(days.count == 6)
            #expect(days["MONDAY"]?["totalActivityDurationMinutes"] as? Int == 20, "the removed phone's minutes stay")
            #expect(days["MONDAY"]?["goalAccomplished"] as? Bool == false && days["MONDAY"]?["totalMinutesBeyondGoal"] as? Int == 20)
            #expect(days["TUESDAY"]?["totalActivityDurationMinutes"] as? Int == 0 && days["TUESDAY"]?["goalAccomplished"] as? Bool == true)
            _ = try await Self.get(server, richard.link("yona:dailyActivityReports"), richard, query: "?size=14")
            // the raw activity no longer names a device
            let rows = try await Self.rawRows(server, richard, try Self.raw(richard, day: Self.at(1, 1, 12, 0), goal: news))
            #expect(rows == [Self.rawRow(Self.at(1, 1, 3, 15), Self.at(1, 1, 3, 35), app: "NU.nl", device: "n/a")])
        }
    }

    @Test("ActivityCommentTest: Richard can delete a goal after Bob commented on a related activity", arguments: TestDatabase.available)
    func activityCommentTestGoalDeletedAfterAComment(db: TestDatabase) async throws {
        try await withServer(db) { server in
            var (richard, bob) = try await Self.buddies(server)
            richard = try await Self.date(server, richard, to: Self.at(1, 1, 2, 18))
            bob = try await Self.date(server, bob, to: Self.at(1, 1, 2, 18))
            let richardNews = try await Self.newsBudget(server, richard, at: Self.at(1, 1, 2, 18))
            try await Self.appActivity(server, richard, "NU.nl", Self.at(1, 2, 8, 45), Self.at(1, 2, 9, 10))
            // Bob comments on Richard's Tuesday
            let buddy = try await Self.firstBuddy(server, bob)
            let goalID = try #require(Self.lastPathSegment(richardNews))
            let details = try await Self.get(
                server, "\(try #require(Self.href(buddy, "self")))/activity/days/\(UserCalendar.day(Self.at(1, 2, 12, 0)))/details/\(goalID)", bob)
            let commented = try await server.request(
                .POST, try #require(Self.href(details, "yona:addComment")), headers: bob.headers, json: ["message": "Hi Richard, everything OK?"])
            try #require(commented.status == 200, "\(commented.text)")
            func comments(_ app: YonaApp) async throws -> Int {
                let inbox = try await Self.get(server, app.link("yona:messages"), app, query: "?size=100")
                return (value(inbox, "_embedded", "yona:messages") as? [[String: Any]] ?? []).filter {
                    $0["@type"] as? String == "ActivityCommentMessage"
                }.count
            }
            #expect(try await comments(richard) == 1)

            // Richard deletes the goal: 204, and the comment goes with it from both inboxes
            let removed = try await server.request(
                .DELETE, Self.adding("message=Don't%20want%20to%20monitor%20my%20news%20time%20anymore", to: richardNews), headers: richard.headers)
            #expect(removed.status == 204, "\(removed.text)")
            #expect(try await comments(richard) == 0)
            let bobsThread = try await server.request(.GET, try #require(Self.href(details, "yona:messages")), headers: bob.headers)
            #expect(bobsThread.status != 200 || bobsThread.json["_embedded"] == nil, "\(bobsThread.text)")
        }
    }

    /// The first entry of the app's buddy list, as its buddies link gives it.
    static func firstBuddy(_ server: TestServer, _ app: YonaApp) async throws -> [String: Any] {
        let buddies = try await get(server, value(app.json, "_embedded", "yona:buddies", "_links", "self", "href") as? String, app)
        return try #require((value(buddies, "_embedded", "yona:buddies") as? [[String: Any]])?.first)
    }

    /// The id at the end of a link's path (its query left off).
    static func lastPathSegment(_ href: String?) -> Substring? { YonaAssertions.stripped(href)?.split(separator: "/").last }

    static let multimediaCategory = "eb7be352-b449-4d30-98fe-3be6ad555b43"

    static func userID(_ app: YonaApp) -> Substring { YonaAssertions.stripped(app.url)!.split(separator: "/").last! }
}

extension YonaApp {
    /// The same app after a GET of `href` (a profile link it already knows).
    func reloaded(from href: String) async throws -> YonaApp {
        let reloaded = try await server.request(.GET, href, headers: headers)
        try #require(reloaded.status == 200, "\(reloaded.text)")
        return YonaApp(server: server, json: reloaded.json, password: password)
    }
}

extension Array {
    /// The two elements of a two-element array.
    fileprivate var tuple: (Element, Element)? { count == 2 ? (self[0], self[1]) : nil }
}
