import Foundation
import Testing

@testable import YonaAPI
@testable import YonaServer

/// Yona's `UserTest`, `UserValidationTest` and `LocalizationTest` features, walked the way the app walks them:
/// HAL links only, on SQLite and PostgreSQL. Each test names the Groovy feature it follows.
@Suite struct YonaUserFeatureTests {
    @Test("UserTest: Create John Doe", arguments: TestDatabase.available)
    func createJohnDoe(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // act
            let john = try await YonaApp.add(server, firstName: "John", nickname: "JD", confirm: false)
            // check
            YonaAssertions.assertUser(john.json)
            let deviceID = try #require(john.requestingDeviceID)
            let base = try #require(YonaAssertions.stripped(john.url))
            #expect(john.link("yona:confirmMobileNumber") == "\(base)/confirmMobileNumber?requestingDeviceId=\(deviceID)")
            #expect(john.link("yona:resendMobileNumberConfirmationCode") == "\(base)/resendMobileNumberConfirmationCode")
            #expect(john.json["appLastOpenedDate"] as? String == YonaAssertions.today)
            #expect(john.json["_embedded"] == nil, "no goals or devices before the number is confirmed")
            let messages = try await server.request(.GET, "\(base)/messages/", headers: john.headers)
            #expect(messages.errorCode == "error.mobile.number.not.confirmed")
        }
    }

    @Test("UserTest: Create John Doe and confirm mobile number", arguments: TestDatabase.available)
    func createAndConfirm(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // act
            let john = try await YonaApp.add(server, firstName: "John", nickname: "JD")
            let reloaded = try await john.reload()
            // check: the confirm answer and the reload are full own users, the requesting device marked
            YonaAssertions.assertUser(john.json)
            YonaAssertions.assertUser(reloaded.json)
            let deviceID = try #require(reloaded.requestingDeviceID)
            #expect(reloaded.requestingDevice?["name"] as? String == "First device")
            #expect(reloaded.link("yona:confirmMobileNumber") == nil)
            let base = try #require(YonaAssertions.stripped(reloaded.url))
            #expect(value(reloaded.json, "_embedded", "yona:buddies", "_links", "self", "href") as? String == "\(base)/buddies/")
            // one's own goals link themselves as Yona's GoalController does, with the owner as requester
            let ownGoals = "\(base)/goals/?requestingUserId=\(base.split(separator: "/").last ?? "")"
            #expect(value(reloaded.json, "_embedded", "yona:goals", "_links", "self", "href") as? String == ownGoals)
            let goalsPage = try await server.request(.GET, ownGoals, headers: john.headers)
            #expect(value(goalsPage.json, "_links", "self", "href") as? String == ownGoals)
            #expect(reloaded.link("yona:messages") == "\(base)/messages/")
            #expect(reloaded.link("yona:dailyActivityReports") == "\(base)/activity/days/")
            #expect(reloaded.link("yona:weeklyActivityReports") == "\(base)/activity/weeks/")
            #expect(reloaded.link("yona:dailyActivityReportsWithBuddies") == "\(base)/activity/withBuddies/days/?requestingDeviceId=\(deviceID)")
            #expect(reloaded.link("yona:requestPinReset") == "\(base)/pinResetRequest/request")
            let number = try #require(reloaded.json["mobileNumber"] as? String)
            #expect(
                reloaded.link("yona:newDeviceRequest") == "\(server.baseURL)/newDeviceRequests/\(number.replacingOccurrences(of: "+", with: "%2B"))")
            // the mandatory goal: Gambling, Yona's id
            #expect(reloaded.goals.count == 1)
            #expect(
                value(reloaded.goals.first, "_links", "yona:activityCategory", "href") as? String
                    == "\(server.baseURL)/activityCategories/\(GoalsTests.gambling)")
        }
    }

    @Test(
        "UserTest: Try update John Doe without requesting device ID request parameter; Try update John Doe with device data; Try to get John Doe 'without private data'",
        arguments: TestDatabase.available)
    func updateWithoutRequestingDevice(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let john = try await YonaApp.add(server, firstName: "John", nickname: "JD")
            let body: [String: Any] = [
                "firstName": "John", "lastName": "Quinn", "nickname": "JD",
                "mobileNumber": john.json["mobileNumber"] as! String,
            ]
            let withoutDevice = try await server.request(.PUT, try #require(YonaAssertions.stripped(john.url)), headers: john.headers, json: body)
            #expect(withoutDevice.status == 400)
            #expect(withoutDevice.errorCode == "error.request.missing.request.parameter")
            #expect(
                (withoutDevice.json["message"] as? String)?.hasPrefix("Request parameter 'requestingDeviceId' is mandatory in this context") == true)
            // UserTest: Try update John Doe with device data
            let withDevice = try await server.request(
                .PUT, try #require(john.link("edit")), headers: john.headers,
                json: body.merging([
                    "deviceName": "My S8", "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1,
                ]) { $1 })
            #expect(withDevice.errorCode == "error.request.extra.property")
            #expect((withDevice.json["message"] as? String)?.hasPrefix("Property 'deviceName' is not supported in this context") == true)
            // UserTest: Try to get John Doe 'without private data'
            let withoutRequester = try await server.request(.GET, try #require(YonaAssertions.stripped(john.url)), headers: john.headers)
            #expect(withoutRequester.status == 400)
            #expect((withoutRequester.json["message"] as? String)?.contains(/'requestingUserId'.* is not present/) == true)
            // through the edit link the app holds, it works and answers a full own user
            let viaEdit = try await server.request(
                .PUT, try #require(john.link("edit")), headers: john.headers,
                json: body.merging(["nickname": "Johnny"]) { $1 })
            #expect(viaEdit.status == 200, "\(viaEdit.text)")
            #expect(viaEdit.json["nickname"] as? String == "Johnny")
            YonaAssertions.assertUser(viaEdit.json)
        }
    }

    @Test(
        "UserValidationTest: AddUser - empty first name, last name, nickname, mobile number, invalid and fixed-line numbers",
        arguments: TestDatabase.available)
    func addUserValidation(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let valid: [String: Any] = ["firstName": "John", "lastName": "Doe", "nickname": "JD", "mobileNumber": randomMobileNumber()]
            let cases: [(String, String, Any, String)] = [
                ("AddUser - empty first name", "firstName", "", "error.user.firstname"),
                ("AddUser - empty last name", "lastName", "", "error.user.lastname"),
                ("AddUser - empty nickname", "nickname", "", "error.user.nickname"),
                ("AddUser - empty mobile number", "mobileNumber", "", "error.user.mobile.number"),
                ("AddUser - invalid mobile number format", "mobileNumber", "++55 5 ", "error.user.mobile.number.invalid"),
                ("AddUser - invalid mobile number (fixed line)", "mobileNumber", "+31356474747", "error.user.mobile.number.not.mobile"),
            ]
            for (feature, key, badValue, code) in cases {
                let response = try await server.request(.POST, "/users/", json: valid.merging([key: badValue]) { $1 })
                #expect(response.status == 400, "\(feature)")
                #expect(response.errorCode == code, "\(feature): \(response.text)")
            }
        }
    }

    @Test("LocalizationTest: Verify default language, Verify Dutch, Verify Latin")
    func localization() async throws {
        try await withServer(.sqlite) { server in
            let cases: [(String?, String, String, String, String)] = [
                (
                    nil, "en-US", "Gambling", "This challenge includes apps and sites like Poker and Blackjack",
                    "The mobile number 'NotANumber' is invalid. It must start with a + sign, with no spaces between the digits"
                ),
                (
                    "nl-NL", "nl-NL", "Gokken", "Deze challenge bevat apps en sites zoals Poker en Blackjack",
                    "Het mobiele nummer 'NotANumber' is ongeldig. Het moet beginnen met een +-teken, zonder spaties tussen de tekens"
                ),
                (
                    "la", "en-US", "Gambling", "This challenge includes apps and sites like Poker and Blackjack",
                    "The mobile number 'NotANumber' is invalid. It must start with a + sign, with no spaces between the digits"
                ),
            ]
            for (acceptLanguage, contentLanguage, name, description, message) in cases {
                let language = acceptLanguage.map { [("Accept-Language", $0)] } ?? []
                let category = try await server.request(.GET, "/activityCategories/\(GoalsTests.gambling)", headers: language)
                #expect(category.status == 200)
                #expect(category.json["name"] as? String == name)
                #expect(category.json["description"] as? String == description)
                #expect(category.headers[canonicalForm: "Content-Language"] == [Substring(contentLanguage)])
                let error = try await server.request(
                    .GET, "/newDeviceRequests/NotANumber",
                    headers: language + [("Yona-NewDeviceRequestPassword", "")])
                #expect(error.status == 400)
                #expect(error.errorCode == "error.user.mobile.number.invalid")
                #expect(error.json["message"] as? String == message)
                #expect((error.json["correlationId"] as? String)?.wholeMatch(of: try Regex("(?i)^\(YonaAssertions.uuid)$")) != nil)
                #expect(error.headers[canonicalForm: "Content-Language"] == [Substring(contentLanguage)])
            }
        }
    }
}
