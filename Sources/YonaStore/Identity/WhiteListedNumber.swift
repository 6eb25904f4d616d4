import FluentKit
import Foundation

/// Identity side: a mobile number the operator allows to sign up while sign-up is limited to the white list
/// (docs/threat-model.md "The white list"). The number only: no time it was added, no link to an account.
package final class WhiteListedNumber: Model, @unchecked Sendable {
    package static let schema = "white_listed_numbers"

    // managed
    @ID(key: .id) package var id: UUID?

    // data
    @Field(key: "mobile_number") package var mobileNumber: String

    package init() {}

    package init(mobileNumber: String) {
        self.id = UUID()
        self.mobileNumber = mobileNumber
    }
}
