extension Clip { var warnings: [String] { [] } }  // TEMPORARY until the input branch merges
