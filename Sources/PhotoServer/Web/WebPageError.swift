struct WebPageError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
