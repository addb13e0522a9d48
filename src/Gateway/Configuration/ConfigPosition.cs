namespace Courier.Gateway.Configuration;

/// <summary>
/// Where something sits in a config file: the file (null when parsed from a string), 1-based line
/// and 1-based column. Prints as <c>file:line:col</c>, the form nats-server uses in its errors.
/// </summary>
internal readonly record struct ConfigPosition(string? File, int Line, int Column)
{
    /// <summary>Shown in place of a file name for text parsed from a string.</summary>
    public const string NoFile = "<string>";

    public override string ToString() => $"{File ?? NoFile}:{Line}:{Column}";
}
