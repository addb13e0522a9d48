namespace Courier.Gateway.Configuration;

/// <summary>The outcome of <see cref="CommandLine.Parse"/>.</summary>
internal sealed class CommandLineResult
{
    public CommandLineResult(CommandLineAction action, CommandLineFlags flags, string? error, IReadOnlyList<string> warnings)
    {
        Action = action;
        Flags = flags;
        Error = error;
        Warnings = warnings;
    }

    /// <summary>Run, show version, show help, or error.</summary>
    public CommandLineAction Action { get; }

    /// <summary>The flags given explicitly (empty unless <see cref="Action"/> is <see cref="CommandLineAction.Run"/>).</summary>
    public CommandLineFlags Flags { get; }

    /// <summary>
    /// For <see cref="CommandLineAction.Error"/>: one line in Go's flag package words, e.g.
    /// <c>flag provided but not defined: -foo</c>; print it followed by <see cref="CommandLine.Usage"/>.
    /// </summary>
    public string? Error { get; }

    /// <summary>nats-server flags that were accepted but have no effect in Courier.</summary>
    public IReadOnlyList<string> Warnings { get; }
}
