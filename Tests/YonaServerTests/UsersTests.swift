import Foundation
import Testing

@testable import YonaAPI
@testable import YonaServer
@testable import YonaStore

/// api.md "Users": the happy paths, in the Yona wire format.
@Suite struct UsersTests {
    @Test(arguments: TestDatabase.available)
    func createWithoutDeviceFieldsGivesUnconfirmedUserWithPassword(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // act
            let number = randomMobileNumber()
            let created = try await server.request(
                .POST, "/users/",
                json: [
                    "firstName": "Richard", "lastName": "Quin", "nickname": "RQ", "mobileNumber": number,
                ])
            // check
            #expect(created.status == 201)
            #expect(created.headers.first(name: "Content-Type") == "application/hal+json")
            let json = created.json
            #expect(json["firstName"] as? String == "Richard")
            #expect(json["mobileNumber"] as? String == number)
            let password = try #require(json["yonaPassword"] as? String)
            #expect(password.hasPrefix("AES:128:"), "the marker Yona's apps and suite expect")
            #expect(password.count == 8 + 43)
            #expect(json["_embedded"] == nil)
            let links = try #require(json["_links"] as? [String: Any])
            #expect(links["yona:confirmMobileNumber"] != nil)
            #expect(links["yona:resendMobileNumberConfirmationCode"] != nil)
            #expect(links["yona:messages"] == nil)
            #expect(value(links, "curies", 0, "name") as? String == "yona")
            #expect(value(links, "curies", 0, "href") as? String == "http://dev.yona.nu/rels/{rel}")
            let creationTime = try #require(json["creationTime"] as? String)
            #expect(creationTime.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000/) != nil)
        }
    }

    @Test(arguments: TestDatabase.available)
    func confirmedProfileEmbedsDevicesWithVPNLoginAndRequestingDevice(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let user = try await server.createUser(extra: [
                "deviceName": "Phone", "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "1.2",
                "deviceAppVersionCode": 42, "deviceFirebaseInstanceId": "fiid-abc:123",
            ])
            // act
            let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
            // check
            #expect(profile.status == 200)
            let device = try #require(value(profile.json, "_embedded", "yona:devices", "_embedded", "yona:devices", 0) as? [String: Any])
            #expect(device["name"] as? String == "Phone")
            #expect(device["operatingSystem"] as? String == "ANDROID")
            #expect(device["firebaseInstanceId"] as? String == "fiid-abc:123")
            #expect(device["requestingDevice"] as? Bool == true, "without requestingDeviceId the default device is the requesting one")
            let vpnLogin = try #require(value(device, "vpnProfile", "vpnLoginID") as? String)
            #expect(vpnLogin.wholeMatch(of: /[0-9a-f-]{36}\$0/) != nil)
            #expect(value(profile.json, "_embedded", "yona:goals", "_embedded", "yona:goals") as? [Any] != nil)
            #expect(value(profile.json, "_embedded", "yona:buddies", "_embedded", "yona:buddies") as? [Any] != nil)
            let encodedNumber = user.mobileNumber.replacingOccurrences(of: "+", with: "%2B")
            #expect(
                (value(profile.json, "_links", "yona:newDeviceRequest", "href") as? String)?.hasSuffix("/newDeviceRequests/\(encodedNumber)") == true)
            #expect((value(profile.json, "_links", "yona:messages", "href") as? String)?.hasSuffix("/users/\(user.id)/messages/") == true)
            #expect(profile.json["yonaPassword"] as? String == user.password)

            // act: the same profile asked for by that device
            let deviceHref = try #require(value(device, "_links", "self", "href") as? String)
            let deviceID = try #require(URLComponents(string: deviceHref)?.path.split(separator: "/").last.map(String.init))
            let asDevice = try await server.request(.GET, "\(user.profilePath)&requestingDeviceId=\(deviceID)", headers: user.passwordHeader)
            // check
            #expect(value(asDevice.json, "_embedded", "yona:devices", "_embedded", "yona:devices", 0, "requestingDevice") as? Bool == true)
            #expect((value(asDevice.json, "_links", "self", "href") as? String)?.hasSuffix("requestingDeviceId=\(deviceID)") == true)
        }
    }

    @Test(arguments: TestDatabase.available)
    func defaultDeviceIsFirstDeviceWithUnknownOS(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser()
            let profile = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
            let device = try #require(value(profile.json, "_embedded", "yona:devices", "_embedded", "yona:devices", 0) as? [String: Any])
            #expect(device["name"] as? String == "First device")
            #expect(device["operatingSystem"] as? String == "UNKNOWN")
            #expect(device["firebaseInstanceId"] == nil)
        }
    }

    @Test(arguments: TestDatabase.available)
    func updateChangesNamesAndANewNumberNeedsConfirmation(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let user = try await server.createUser()
            let newNumber = randomMobileNumber()
            // act
            let (deviceID, _) = try await DevicesTests.firstDevice(server, user)
            let updated = try await server.request(
                .PUT, "\(user.path)?requestingDeviceId=\(deviceID)", headers: user.passwordHeader,
                json: [
                    "firstName": "Changed", "lastName": "Name", "nickname": "CN", "mobileNumber": newNumber,
                    "yonaPassword": user.password, "_links": ["self": ["href": "ignored"]],
                ])
            // check
            #expect(updated.status == 200, "\(updated.text)")
            #expect(updated.json["firstName"] as? String == "Changed")
            #expect(updated.json["mobileNumber"] as? String == newNumber)
            #expect(value(updated.json, "_links", "yona:confirmMobileNumber") != nil)
            let again = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
            #expect(again.json["nickname"] as? String == "CN")
            let confirmed = try await server.request(.POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader, json: ["code": "1234"])
            #expect(confirmed.status == 200)
            #expect(value(confirmed.json, "_links", "yona:messages") != nil)
        }
    }

    @Test(arguments: TestDatabase.available)
    func deleteRemovesIdentityAndAnonymizedParts(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // setup
            let user = try await server.createUser()
            let other = try await server.createUser()
            // act
            let deleted = try await server.request(.DELETE, user.path, headers: user.passwordHeader)
            // check
            #expect(deleted.status == 204)
            let gone = try await server.request(.GET, user.profilePath, headers: user.passwordHeader)
            #expect(gone.status == 400)
            #expect(gone.errorCode == "error.user.not.found.id")
            #expect(try await User.query(on: server.app.db).count() == 1)
            #expect(try await UserAnonymized.query(on: server.app.db).count() == 1)
            #expect(try await DeviceAnonymized.query(on: server.app.db).count() == 1)
            let survivor = try await server.request(.GET, other.profilePath, headers: other.passwordHeader)
            #expect(survivor.status == 200)
        }
    }

    @Test(arguments: TestDatabase.available)
    func resendIssuesFreshCodeAndResetsAttempts(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let user = try await server.createUser(confirm: false)
            for _ in 1...3 {
                _ = try await server.request(.POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader, json: ["code": "0000"])
            }
            let resent = try await server.request(.POST, "\(user.path)/resendMobileNumberConfirmationCode", headers: user.passwordHeader)
            #expect(resent.status == 204)
            let wrong = try await server.request(.POST, "\(user.path)/confirmMobileNumber", headers: user.passwordHeader, json: ["code": "0000"])
            #expect(wrong.json["remainingAttempts"] as? Int == 4)
        }
    }
}
