import Foundation
import Testing

@testable import YonaAPI
@testable import YonaServer

/// The rest of Yona's `UserTest` and `DeviceTest` features, sent as Yona's suite sends them: every device key present
/// (possibly JSON `null`), `"yonaPassword": null` and `"_links": {}` in a new user, the `self` link (not `edit`) for
/// updates, `Yona-App-Version` headers as the Android app writes them. Each test names the Groovy feature it follows.
@Suite struct YonaUserEdgeFeatureTests {
    /// `makeUserJsonWithDeviceInfo`: all five device keys, `null` where the row has none.
    static func userWithDevice(name: String?, os: String?, version: String?, code: Int?) -> [String: Any] {
        [
            "firstName": "John", "lastName": "Doe", "nickname": "JD", "mobileNumber": randomMobileNumber(),
            "yonaPassword": NSNull(), "_links": [String: Any](),
            "deviceName": name ?? NSNull(), "deviceOperatingSystem": os ?? NSNull(), "deviceAppVersion": version ?? NSNull(),
            "deviceAppVersionCode": code ?? NSNull(),
            "deviceFirebaseInstanceId": name == nil ? NSNull() : UUID().uuidString.lowercased(),
        ]
    }

    @Test("UserTest: Try to post incorrect device information", arguments: TestDatabase.available)
    func incorrectDeviceInformation(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let rows: [(String?, String?, String?, Int?, Int)] = [
                ("some name", "IOS", "1.1", 5000, 201), ("some name", nil, nil, nil, 400), ("some name", "IOS", nil, nil, 400),
                ("some name", nil, "1.1", nil, 400), ("some name", nil, nil, 5000, 400), ("some name", nil, "1.1", 50, 400),
                ("some name", "IOS", "1.1", nil, 400), ("some name", "IOS", nil, 5000, 400), (nil, "IOS", "1.1", 5000, 400),
                (nil, nil, nil, nil, 201), (nil, "IOS", nil, nil, 400), (nil, nil, "1.1", nil, 400), (nil, nil, nil, 5000, 400),
                (nil, nil, "1.1", 5000, 400), (nil, "IOS", "1.1", nil, 400), (nil, "IOS", nil, 5000, 400),
            ]
            for (name, os, version, code, status) in rows {
                let answer = try await server.request(.POST, "/users/", json: Self.userWithDevice(name: name, os: os, version: version, code: code))
                #expect(
                    answer.status == status,
                    "\(String(describing: name)) \(String(describing: os)) \(String(describing: version)) \(String(describing: code)): \(answer.text)"
                )
            }
        }
    }

    @Test("Yona's codes for device fields without a device name: extra on creation, dropped on an update", arguments: TestDatabase.available)
    func deviceFieldsWithoutADeviceName(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // creation: the first extra field is named (Yona's assertValidDeviceData), an Instance ID alone is ignored
            for (os, version, code, extra) in [
                ("IOS", "1.1", 5000, "deviceOperatingSystem"), (nil, "1.1", 5000, "deviceAppVersion"), (nil, nil, 5000, "deviceAppVersionCode"),
            ] as [(String?, String?, Int?, String)] {
                let answer = try await server.request(.POST, "/users/", json: Self.userWithDevice(name: nil, os: os, version: version, code: code))
                #expect(answer.status == 400 && answer.errorCode == "error.request.extra.property", "\(answer.text)")
                #expect(
                    (answer.json["message"] as? String)?.hasPrefix("Property '\(extra)' is not supported in this context") == true, "\(answer.text)")
            }
            var instanceIDOnly = Self.userWithDevice(name: nil, os: nil, version: nil, code: nil)
            instanceIDOnly["deviceFirebaseInstanceId"] = "SomeLongString"
            let created = try await server.request(.POST, "/users/", json: instanceIDOnly)
            #expect(created.status == 201, "\(created.text)")
            #expect(value(created.json, "_embedded", "yona:devices", "_embedded", "yona:devices", 0, "firebaseInstanceId") == nil)
            // update: without a device name Yona dropped the device fields unread; with one it refused the name
            let john = try await YonaApp.add(server, firstName: "John", nickname: "JD")
            let number = try #require(john.json["mobileNumber"] as? String)
            var body: [String: Any] = [
                "firstName": "John", "lastName": "Doe", "nickname": "Johnny", "mobileNumber": number,
                "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "3.0", "deviceAppVersionCode": 10000,
                "deviceFirebaseInstanceId": "SomeLongString",
            ]
            let updated = try await server.request(.PUT, john.url, headers: john.headers, json: body)
            #expect(updated.status == 200 && updated.json["nickname"] as? String == "Johnny", "\(updated.text)")
            body["deviceName"] = "My phone"
            let refused = try await server.request(.PUT, john.url, headers: john.headers, json: body)
            #expect(refused.status == 400 && refused.errorCode == "error.request.extra.property", "\(refused.text)")
            #expect((refused.json["message"] as? String)?.hasPrefix("Property 'deviceName' is not supported in this context") == true)
        }
    }

    @Test(
        "DeviceTest: Create John Doe with an device with the longest supported name; Try to create John Doe with device operating system UNKNOWN",
        arguments: TestDatabase.available)
    func longestDeviceNameAndUnknownSystem(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // a 20-character name is the longest a device may have
            let created = try await server.request(
                .POST, "/users/", json: Self.userWithDevice(name: "01234567890123456789", os: "IOS", version: "9.9.9", code: 999))
            #expect(created.status == 201, "\(created.text)")
            let john = try await YonaApp(server: server, json: created.json, password: try #require(created.json["yonaPassword"] as? String))
                .confirm()
            #expect(john.devices.count == 1)
            #expect(john.requestingDevice?["name"] as? String == "01234567890123456789")
            #expect(john.requestingDevice?["operatingSystem"] as? String == "IOS")
            #expect(john.requestingDevice?["appLastOpenedDate"] as? String == YonaAssertions.today)
            // UNKNOWN is what the server says of a device it knows nothing of; an app cannot claim it
            let unknown = try await server.request(
                .POST, "/users/", json: Self.userWithDevice(name: "First device", os: "UNKNOWN", version: "9.9.9", code: 999))
            #expect(unknown.status == 400)
            #expect(unknown.errorCode == "error.device.unknown.operating.system")
        }
    }

    @Test("UserTest: Request resend of confirmation code", arguments: TestDatabase.available)
    func resendConfirmationCode(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let john = try await YonaApp.add(server, firstName: "John", nickname: "JD", confirm: false)
            let confirm = try #require(john.link("yona:confirmMobileNumber"))
            let wrong = try await server.request(.POST, confirm, headers: john.headers, json: ["code": "12341"])
            #expect(wrong.status == 400 && wrong.errorCode == "error.mobile.number.confirmation.code.mismatch")
            #expect(wrong.json["remainingAttempts"] as? Int == 4)
            // act: Yona's app posts "{}" as the body
            let resend = try await server.request(
                .POST, try #require(john.link("yona:resendMobileNumberConfirmationCode")), headers: john.headers, body: Data("{}".utf8))
            #expect(resend.status == 204, "\(resend.text)")
            // check: the count starts again, and the new code confirms
            let wrongAgain = try await server.request(.POST, confirm, headers: john.headers, json: ["code": "12341"])
            #expect(wrongAgain.errorCode == "error.mobile.number.confirmation.code.mismatch")
            #expect(wrongAgain.json["remainingAttempts"] as? Int == 4)
            let right = try await server.request(.POST, confirm, headers: john.headers, json: ["code": "1234"])
            #expect(right.status == 200, "\(right.text)")
        }
    }

    @Test("UserTest: Delete John Doe before confirming the mobile number; Try delete nonexistent user", arguments: TestDatabase.available)
    func deleteBeforeConfirmingAndDeleteNonexistent(db: TestDatabase) async throws {
        try await withServer(db) { server in
            // a nonexistent user: the edit link with another id
            let richard = try await YonaApp.add(server, firstName: "Richard", nickname: "RQ")
            let edit = try #require(richard.link("edit"))
            let id = try #require(YonaAssertions.stripped(edit)?.split(separator: "/").last.map(String.init))
            let missing = edit.replacingOccurrences(of: id, with: "00000000-" + id.dropFirst(9))
            let nonexistent = try await server.request(.DELETE, missing + "&message=", headers: richard.headers)
            #expect(nonexistent.status == 400 && nonexistent.errorCode == "error.user.not.found.id", "\(nonexistent.text)")
            // an unconfirmed user deletes the account through the edit link, with Yona's empty message
            let john = try await YonaApp.add(server, firstName: "John", nickname: "JD", confirm: false)
            let deleted = try await server.request(.DELETE, try #require(john.link("edit")) + "&message=", headers: john.headers)
            #expect(deleted.status == 204, "\(deleted.text)")
            let gone = try await server.request(.GET, john.url, headers: john.headers)
            #expect(gone.status == 400 || gone.status == 404)
            #expect(gone.errorCode == "error.user.not.found.id", "\(gone.text)")
            // the other account is untouched
            #expect(try await server.request(.GET, richard.url, headers: richard.headers).status == 200)
        }
    }

    @Test("UserTest: Update John Doe with a different mobile number", arguments: TestDatabase.available)
    func updateWithADifferentNumberThroughTheSelfLink(db: TestDatabase) async throws {
        try await withServer(db) { server in
            let john = try await YonaApp.add(server, firstName: "John", nickname: "JD")
            let number = try #require(john.json["mobileNumber"] as? String)
            let messages = try #require(john.link("yona:messages"))
            // act: the self link, the body as Yona's convertToJson writes it, a number one digit longer
            let updated = try await server.request(
                .PUT, john.url, headers: john.headers,
                json: [
                    "firstName": "John", "lastName": "Doe", "nickname": "Johnny", "mobileNumber": number + "1", "yonaPassword": john.password,
                    "_links": ["self": ["href": john.url]],
                ])
            // check: changed, to be confirmed again; the inbox waits for it
            #expect(updated.status == 200, "\(updated.text)")
            #expect(updated.json["mobileNumber"] as? String == number + "1")
            #expect(updated.json["nickname"] as? String == "Johnny")
            let creation = try #require(updated.json["creationTime"] as? String)
            #expect(creation.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+\d{4}$"#, options: .regularExpression) != nil, "\(creation)")
            let confirm = try #require(value(updated.json, "_links", "yona:confirmMobileNumber", "href") as? String)
            let waiting = try await server.request(.GET, messages, headers: john.headers)
            #expect(waiting.status == 400 && waiting.errorCode == "error.mobile.number.not.confirmed")
            let confirmed = try await server.request(.POST, confirm, headers: john.headers, json: ["code": "1234"])
            #expect(confirmed.status == 200, "\(confirmed.text)")
            YonaAssertions.assertUser(confirmed.json)
            #expect(try await server.request(.GET, messages, headers: john.headers).status == 200)
        }
    }
}
