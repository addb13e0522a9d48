namespace Courier.Gateway.Configuration;

/// <summary>
/// A config file could not be read, parsed or bound. <see cref="Exception.Message"/> is
/// <c>file:line:col: reason</c> (one line per error when binding found several), ready to print.
/// </summary>
internal sealed class ConfigException : Exception
{
    /// <summary>An error at a known place.</summary>
    public ConfigException(ConfigPosition position, string reason)
        : base($"{position}: {reason}")
    {
        Position = position;
        Reason = reason;
        Errors = [Message];
    }

    /// <summary>An error with no place in a file (e.g. the file cannot be opened).</summary>
    public ConfigException(string reason, Exception? inner = null)
        : base(reason, inner)
    {
        Reason = reason;
        Errors = [Message];
    }

    /// <summary>Several binding errors at once, as nats-server reports them; the first gives the position.</summary>
    public ConfigException(IReadOnlyList<ConfigException> errors)
        : base(string.Join('\n', errors.Select(e => e.Message)))
    {
        ArgumentOutOfRangeException.ThrowIfZero(errors.Count);
        Position = errors[0].Position;
        Reason = errors[0].Reason;
        Errors = [.. errors.Select(e => e.Message)];
    }

    /// <summary>Where the (first) error is; null when it has no place in a file.</summary>
    public ConfigPosition? Position { get; }

    /// <summary>The (first) error without its position.</summary>
    public string Reason { get; }

    /// <summary>Every error, each as <c>file:line:col: reason</c>.</summary>
    public IReadOnlyList<string> Errors { get; }
}
