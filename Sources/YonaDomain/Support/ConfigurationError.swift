/// A setting the server cannot run with: the variable and what is wrong with it, printed as one line. Thrown by
/// `AppConfig` and by everything that reads a setting's file (the data directory's secrets, the FCM service account).
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public let variable: String
    public let problem: String
    public var description: String { "configuration error: \(variable) \(problem)" }

    public init(variable: String, problem: String) {
        self.variable = variable
        self.problem = problem
    }
}
