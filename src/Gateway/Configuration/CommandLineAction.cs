namespace Courier.Gateway.Configuration;

/// <summary>What the process should do after reading its command line (and config file).</summary>
internal enum CommandLineAction
{
    /// <summary>Start the server with the resulting options.</summary>
    Run,

    /// <summary><c>-v</c>, <c>--version</c> or the command <c>version</c>: print the version and exit 0.</summary>
    ShowVersion,

    /// <summary><c>-h</c>, <c>--help</c> or the command <c>help</c>: print <see cref="CommandLine.Usage"/> and exit 0.</summary>
    ShowHelp,

    /// <summary><c>--signal command[=pid]</c>: signal a running server and exit.</summary>
    SendSignal,

    /// <summary>Bad flags or config: print the error and exit non-zero.</summary>
    Error,
}
