import Foundation
import Vapor
import YonaDomain
import YonaStore

/// `/users/...`: create, confirm, read, change and delete a user.
package enum UsersController {
    package static func register(_ routes: any RoutesBuilder) {
        let users = routes.grouped("users")
        users.post(use: create)
        users.get(":userID", use: get)
        users.put(":userID", use: update)
        users.delete(":userID", use: delete)
        users.post(":userID", "confirmMobileNumber", use: confirmMobileNumber)
        users.post(":userID", "resendMobileNumberConfirmationCode", use: resendConfirmationCode)
    }

    @Sendable package static func create(req: Request) async throws -> Response {
        let new = try await req.decodeStrict(CreateUserRequest.self).toNewUser(
            allowPrivateEndpoints: req.application.yona.config.webPushAllowPrivateEndpoints)
        try req.checkAppVersion(new.device)
        try await req.limitAttempts(number: new.mobileNumber.value)
        let (user, password) =
            if let code = req.queryValue("overwriteUserConfirmationCode") {
                try await req.overwrites.overwrite(with: new, code: code)
            } else {
                try await req.users.create(new)
            }
        return try await req.ownUserResponse(
            user, password: password.wireValue,
            requestingDeviceID: user.privateData.devices.first?.id, status: .created)
    }

    @Sendable package static func get(req: Request) async throws -> Response {
        let userID = try req.uuidParameter("userID")
        let requestingUserID = try req.requiredUUIDQuery("requestingUserId")
        let requestingDeviceID = try req.optionalUUIDQuery("requestingDeviceId")
        if let temporaryPassword = req.queryValue("tempPassword") {
            try await req.limitAttempts(number: nil)
            // As Yona: a temporary password only ever opens the invited account itself.
            guard requestingUserID == userID else { throw YonaError(.decryptingData) }
            let invited = try await req.invitations.unlock(userID: userID, temporaryPassword: temporaryPassword)
            return try .hal(req.rendering.invitedUser(invited.user, password: invited.password, temporaryPassword: temporaryPassword))
        }
        guard requestingUserID == userID else {
            // Another user is visible only as a buddy, from what the requester's own data holds; goals and devices
            // only once the buddy shares.
            let requester = try await req.users.unlock(userID: requestingUserID, passwordHeader: req.yonaPasswordHeader)
            guard let buddy = requester.privateData.buddies.first(where: { $0.userID == userID }) else {
                throw YonaError(.buddyNotFoundForUser)
            }
            let side = try await req.buddySides(of: requester, only: buddy.id)[buddy.id]
            return try .hal(req.rendering.buddyUser(buddy, side: side, requester: requester, topLevel: true))
        }
        let user = try await req.users.unlock(userID: userID, passwordHeader: req.yonaPasswordHeader)
        try checkDevice(requestingDeviceID, of: user)
        return try await req.ownUserResponse(user, password: req.yonaPasswordHeader, requestingDeviceID: requestingDeviceID)
    }

    @Sendable package static func update(req: Request) async throws -> Response {
        let userID = try req.uuidParameter("userID")
        let requestingDeviceID = try req.optionalUUIDQuery("requestingDeviceId")
        if let temporaryPassword = req.queryValue("tempPassword") {
            return try await takeOver(req: req, userID: userID, temporaryPassword: temporaryPassword)
        }
        // An invited account's own edit link, with the Yona password its invitation showed: a take-over too.
        if let invited = try await req.invitations.unlock(userID: userID, passwordHeader: req.yonaPasswordHeader) {
            let new = try await req.decodeStrict(CreateUserRequest.self).toNewUser(
                refusingStrayDeviceFields: false, allowPrivateEndpoints: req.application.yona.config.webPushAllowPrivateEndpoints)
            try req.checkAppVersion(new.device)
            return try await takeOver(req: req, invited, as: new)
        }
        // Yona requires the requesting device here (the answer marks it), except on a take-over.
        guard let requestingDeviceID else { throw YonaError(.missingRequestParameter, quoting: "requestingDeviceId") }
        var user = try await req.users.unlock(userID: userID, passwordHeader: req.yonaPasswordHeader)
        try checkDevice(requestingDeviceID, of: user)
        let body = try req.decodeStrict(UpdateUserRequest.self)
        // A new number is texted a code: it counts against that number's allowance like any text.
        if let number = body.mobileNumber, number != user.mobileNumber { try await req.limitAttempts(number: number) }
        if let creationTime = try body.creationTime(testServer: req.application.yona.config.testServer) {
            // As Yona's test server: the buddy relations then date from the new creation time too.
            user = try await req.users.modifyPrivateData(user) { data in
                data.creationTime = creationTime
                for index in data.buddies.indices { data.buddies[index].lastStatusChangeTime = creationTime }
            }
        }
        let updated = try await req.users.update(
            user, firstName: try PersonName.validated(body.firstName, or: .firstNameMissing, property: "firstName"),
            lastName: try PersonName.validated(body.lastName, or: .lastNameMissing, property: "lastName"),
            nickname: try PersonName.validated(body.nickname, or: .nicknameMissing, property: "nickname"),
            mobileNumber: try MobileNumber(try requireText(body.mobileNumber, or: .mobileNumberMissing)))
        return try await req.ownUserResponse(updated, password: req.yonaPasswordHeader, requestingDeviceID: requestingDeviceID)
    }

    /// `PUT /users/{u}?tempPassword=`: the invitee's app makes an account a buddy created its own.
    private static func takeOver(req: Request, userID: UUID, temporaryPassword: String) async throws -> Response {
        // As Yona: the server makes the taken-over account's password; an app that brings its own is too old.
        guard req.yonaPasswordHeader == nil else { throw YonaError(.appProvidedPasswordNotSupported) }
        // As Yona: only an invited account can be taken over, whatever the password.
        if let record = try await User.find(userID, on: req.store), !record.createdOnBuddyRequest {
            throw YonaError(.userNotCreatedOnBuddyRequest)
        }
        // The body is checked before the rate limit and the key derivation are spent on it.
        let new = try await req.decodeStrict(CreateUserRequest.self).toNewUser(
            refusingStrayDeviceFields: false, allowPrivateEndpoints: req.application.yona.config.webPushAllowPrivateEndpoints)
        try req.checkAppVersion(new.device)
        try await req.limitAttempts(number: nil)
        return try await takeOver(req: req, try await req.invitations.unlock(userID: userID, temporaryPassword: temporaryPassword), as: new)
    }

    private static func takeOver(req: Request, _ invited: InvitationService.Opened, as new: NewUser) async throws -> Response {
        let (user, password) = try await req.invitations.takeOver(invited, as: new)
        return try await req.ownUserResponse(user, password: password.wireValue, requestingDeviceID: user.privateData.devices.first?.id)
    }

    @Sendable package static func delete(req: Request) async throws -> HTTPStatus {
        let user = try await req.unlockPathUser()
        try await req.users.delete(user, text: req.queryValue("message"))
        return .noContent
    }

    @Sendable package static func confirmMobileNumber(req: Request) async throws -> Response {
        let requestingDeviceID = try req.optionalUUIDQuery("requestingDeviceId")
        let user = try await req.unlockPathUser()
        try checkDevice(requestingDeviceID, of: user)
        let body = try req.decodeStrict(ConfirmationCodeRequest.self)
        // Every guess counts against the number's hourly allowance (shared with the texts sent to it), whatever
        // account asks and however often the code was re-issued (threat-model.md).
        try await req.limitAttempts(number: user.mobileNumber)
        let confirmed = try await req.users.confirmMobileNumber(user, code: body.code)
        return try await req.ownUserResponse(confirmed, password: req.yonaPasswordHeader, requestingDeviceID: requestingDeviceID)
    }

    @Sendable package static func resendConfirmationCode(req: Request) async throws -> HTTPStatus {
        let user = try await req.unlockPathUser()
        try await req.limitAttempts(number: user.mobileNumber)
        try await req.users.resendConfirmationCode(user)
        return .noContent
    }

    private static func checkDevice(_ deviceID: UUID?, of user: UnlockedUser) throws {
        if let deviceID, !user.privateData.devices.contains(where: { $0.id == deviceID }) {
            throw YonaError(.deviceNotFound)
        }
    }
}
