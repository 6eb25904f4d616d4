import Foundation

/// The one error type of the product. Domain code throws it; the API maps it to the wire in one place.
package struct YonaError: Error, Equatable, Sendable {
    package let code: ErrorCode
    /// Only for confirmation failures: how many more tries are left.
    package var remainingAttempts: Int? = nil
    /// Only for rate limits: seconds until a retry may succeed.
    package var retryAfterSeconds: Int? = nil
    /// What Yona's message quotes back to the caller (the number it refused); never logged.
    package var quoted: String? = nil

    package init(_ code: ErrorCode, remainingAttempts: Int? = nil, retryAfterSeconds: Int? = nil, quoting quoted: String? = nil) {
        self.code = code
        self.remainingAttempts = remainingAttempts
        self.retryAfterSeconds = retryAfterSeconds
        self.quoted = quoted.map { String($0.prefix(64)) }
    }

    /// Several values for a text with `{0}`, `{1}`, … (each cut to 64 characters).
    package init(_ code: ErrorCode, quoting values: [String]) {
        self.code = code
        self.quoted = values.map { String($0.prefix(64)) }.joined(separator: Self.separator)
    }

    package static let separator = "\u{1F}"
}

/// The error codes of the contract (api.md). Clients switch on these strings.
package enum ErrorCode: String, Sendable, CaseIterable {
    case missingPasswordHeader = "error.missing.password.header"
    case decryptingData = "error.decrypting.data"
    case userNotFound = "error.user.not.found.id"
    case invalidUUID = "error.invalid.uuid"
    case missingProperty = "error.request.missing.property"
    case extraProperty = "error.request.extra.property"
    case userExists = "error.user.exists"
    case invalidMobileNumber = "error.user.mobile.number.invalid"
    case mobileNumberLeadingZero = "error.user.mobile.number.invalid.leading.zero"
    case mobileNumberNotMobile = "error.user.mobile.number.not.mobile"
    case firstNameMissing = "error.user.firstname"
    case invalidName = "error.user.name.invalid"
    case lastNameMissing = "error.user.lastname"
    case nicknameMissing = "error.user.nickname"
    case mobileNumberMissing = "error.user.mobile.number"
    case emailAddressMissing = "error.user.email.address"
    case mobileNumberNotConfirmed = "error.mobile.number.not.confirmed"
    case confirmationCodeMismatch = "error.mobile.number.confirmation.code.mismatch"
    case tooManyFailedConfirmationAttempts = "error.mobile.number.confirmation.code.too.many.failed.attempts"
    case confirmationCodeNotSet = "error.mobile.number.confirmation.code.not.set"
    case invalidDeviceName = "error.device.invalid.device.name"
    case deviceNameAlreadyExists = "error.device.name.already.exists"
    case cannotDeleteLastDevice = "error.device.cannot.delete.last.one"
    case cannotSwitchOperatingSystem = "error.device.cannot.switch.operating.system"
    case noDeviceRequestPresent = "error.no.device.request.present"
    case deviceRequestExpired = "error.device.request.expired"
    case deviceRequestInvalidPassword = "error.device.request.invalid.password"
    case deviceNotFound = "error.device.not.found.id"
    case userPhotoNotFound = "error.user.photo.not.found.id"
    case invalidPhotoFileType = "error.user.photo.invalid.file.type"
    case unknownOperatingSystem = "error.device.unknown.operating.system"
    case invalidVersionCode = "error.device.invalid.version.code"
    /// An extension of the Yona format: an `apnsToken` or `webPushSubscription` the server cannot push to.
    case invalidPushAddress = "error.device.invalid.push.address"
    case appVersionNotSupported = "error.device.app.version.not.supported"
    case invalidVersionCodeInHeader = "error.request.with.invalid.version.code"
    case tooManyRequests = "error.too.many.requests"
    case unauthorized = "error.unauthorized"
    case messageNotFound = "error.message.not.found"
    case buddyOnlyTwoWay = "error.buddy.only.twoway.buddies.allowed"
    case buddyCannotInviteSelf = "error.buddy.cannot.invite.self"
    case buddyCannotInviteExisting = "error.buddy.cannot.invite.existing.buddy"
    case buddyNotFound = "error.buddy.not.found"
    /// Another user asked for as a buddy who is none (any more). Never `error.user.not.found.id` there: Yona's Android
    /// app takes that code as "your own account is gone" and wipes itself.
    case buddyNotFoundForUser = "error.buddy.not.found.for.user"
    case userCreatedOnBuddyRequest = "error.user.created.on.buddy.request"
    case userNotCreatedOnBuddyRequest = "error.user.not.created.on.buddy.request"
    case appProvidedPasswordNotSupported = "error.user.app.provided.password.not.supported"
    case userExistsCreatedOnBuddyRequest = "error.user.exists.created.on.buddy.request"
    case maximumNumberOfUsersReached = "error.user.maximum.number.reached"
    case numberAlreadyWhiteListed = "error.number.already.white.listed"
    case numberNotWhiteListed = "error.number.not.white.listed"
    case invalidEmailAddress = "error.user.email.address.invalid"
    case overwriteCodeNotSet = "error.user.overwrite.confirmation.code.not.set"
    case overwriteCodeMismatch = "error.user.overwrite.confirmation.code.mismatch"
    case tooManyFailedOverwriteAttempts = "error.user.overwrite.confirmation.code.too.many.failed.attempts"
    case messageActionNotSupported = "error.message.action.not.supported"
    case messageActionMissingProperty = "error.message.action.missing.property"
    case cannotDeleteUnprocessedMessage = "error.cannot.delete.unprocessed.message"
    case invalidEventTime = "error.analysis.invalid.event.time"
    case appActivityEndBeforeStart = "error.analysis.invalid.app.activity.data.end.before.start"
    case appActivityStartsInFuture = "error.analysis.invalid.app.activity.data.starts.in.future"
    case appActivityEndsInFuture = "error.analysis.invalid.app.activity.data.ends.in.future"
    case duplicateActivityCategoryName = "error.activitycategory.duplicate.name"
    case activityCategoryNotFound = "error.activitycategory.not.found"
    case goalNotFound = "error.goal.not.found.id.for.user.anonymized"
    case secondGoalOnActivityCategory = "error.goal.cannot.add.second.on.activity.category"
    case cannotRemoveMandatoryGoal = "error.goal.cannot.remove.mandatory"
    case cannotChangeGoalActivityCategory = "error.goal.cannot.change.activity.category"
    case invalidGoal = "error.goal.invalid"
    case goalBudgetNegative = "error.goal.budget.invalid.max.duration.cannot.be.negative"
    case goalZoneRequired = "error.goal.time.zone.invalid.at.least.one.zone.required"
    case goalZoneFormat = "error.goal.time.zone.invalid.zone.format"
    case goalZoneHour = "error.goal.time.zone.not.a.valid.hour"
    case goalZoneQuarterHour = "error.goal.time.zone.not.a.quarter.hour"
    case goalZoneToNotBeyondFrom = "error.goal.time.zone.to.not.beyond.from"
    case goalZoneBeyond24 = "error.goal.time.zone.beyond.twenty.four"
    case cannotChangeGoalType = "error.goal.cannot.change.type"
    case goalUpdateBeforeOriginal = "error.goal.update.time.before.original"
    case pinResetCodeMismatch = "error.pin.reset.request.confirmation.code.mismatch"
    case pinResetCodeNotSet = "error.pin.reset.request.confirmation.code.not.set"
    case tooManyFailedPinResetAttempts = "error.pin.reset.request.confirmation.code.too.many.failed.attempts"
    case stringTooLong = "error.invalid.string.too.long"
    case invalidDate = "error.invalid.date"
    case dateTooEarly = "error.invalid.date.too.early"
    case activityDateGoalMismatch = "error.activity.date.goal.mismatch"
    case buddyListEmpty = "error.buddy.list.empty"
    case invalidJSON = "error.request.invalid.json"
    case missingRequestParameter = "error.request.missing.request.parameter"
    case invalidParameter = "error.request.invalid.parameter"
    case invalidAppVersionHeader = "error.request.with.invalid.app.version.header"
    case unknownPath = "error.request.unknown.path"
    case methodNotAllowed = "error.request.method.not.allowed"
    case tooLarge = "error.request.too.large"
    case unsupportedMediaType = "error.request.unsupported.media.type"
    case unexpected = "error.unexpected"
    case serviceUnavailable = "error.service.unavailable"
}

/// Required text properties must be present and not blank; `code` is what Yona answers for that property, and
/// `property` the name its message gives.
package func requireText(_ value: String?, or code: ErrorCode = .missingProperty, property: String? = nil) throws(YonaError) -> String {
    guard let value, !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
        throw YonaError(code, quoting: property)
    }
    return value
}
