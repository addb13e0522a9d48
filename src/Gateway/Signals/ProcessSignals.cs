using System.Runtime.InteropServices;
using Courier.Gateway.Logging;
using Microsoft.Extensions.Logging;

namespace Courier.Gateway.Signals;

/// <summary>
/// The running server's signal handling, as nats-server's handleSignals (server/signal.go):
/// SIGINT stops and exits 0; SIGTERM stops and exits 1 (unless lame duck mode is under way, which
/// exits 0 when done); SIGQUIT stops and exits 2 (Go's runtime exits 2 on it); SIGUSR1 reopens the
/// log file; SIGUSR2 enters lame duck mode; SIGHUP reloads the config file.
/// </summary>
internal sealed partial class ProcessSignals : IDisposable
{
    private readonly ServerHost _host;
    private readonly NatsLogSink _sink;
    private readonly ILogger _log;
    private readonly IReadOnlyList<string> _args;
    private readonly TaskCompletionSource<int> _stop = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _stopping = new();
    private readonly List<PosixSignalRegistration> _registrations = [];

    public ProcessSignals(ServerHost host, NatsLogSink sink, ILogger log, IReadOnlyList<string> args)
    {
        _args = args;
        _host = host;
        _sink = sink;
        _log = log;
        host.ReloadWithStartArguments = () => host.Reload(args, sink); // $SYS.REQ.SERVER.<id>.RELOAD
        // A signal registered here belongs in UnixSignals.UnignoreHandled's list too (answered even if ignored at start).
        Register(PosixSignal.SIGINT, "interrupt", () => Stop(0));
        Register(PosixSignal.SIGTERM, "terminated", () =>
        {
            if (!_host.IsLameDuck)
            {
                Stop(1);
            }
        });
        Register(PosixSignal.SIGQUIT, "quit", () => Stop(2));
        Register(UnixSignals.Raw(UnixSignals.SigUsr1), "user defined signal 1", ReopenLogFile);
        Register(UnixSignals.Raw(UnixSignals.SigUsr2), "user defined signal 2", () => _ = LameDuckAsync());
        Register(PosixSignal.SIGHUP, "hangup", Reload);
    }

    /// <summary>Completes with the exit code once a signal (or the end of lame duck mode) stops the server.</summary>
    public Task<int> WaitForStopAsync() => _stop.Task;

    public void Dispose()
    {
        foreach (var registration in _registrations)
        {
            registration.Dispose();
        }

        _stopping.Dispose();
    }

    private void Register(PosixSignal signal, string name, Action handle) =>
        _registrations.Add(PosixSignalRegistration.Create(signal, context =>
        {
            context.Cancel = true;
            Log.Trapped(_log, name);
            handle();
        }));

    private void Stop(int exitCode)
    {
        if (_stop.TrySetResult(exitCode))
        {
            _stopping.Cancel();
        }
    }

    private void ReopenLogFile()
    {
        try
        {
            if (_sink.Reopen())
            {
                Log.Reopened(_log);
            }
            else
            {
                Log.ReopenIgnored(_log);
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            Log.ReopenFailed(_log, e.Message);
        }
    }

    private async Task LameDuckAsync()
    {
        try
        {
            if (await _host.RunLameDuckModeAsync(_stopping.Token).ConfigureAwait(false))
            {
                Stop(0);
            }
        }
        catch (OperationCanceledException)
        {
            // Stopped by another signal meanwhile: that one's exit code stands.
        }
    }

    private void Reload()
    {
        if (_host.Reload(_args, _sink) is { } error)
        {
            Log.ReloadFailed(_log, error);
        }
    }

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Debug, Message = "Trapped \"{Signal}\" signal")]
        public static partial void Trapped(ILogger logger, string signal);

        [LoggerMessage(Level = LogLevel.Information, Message = "File log re-opened")]
        public static partial void Reopened(ILogger logger);

        [LoggerMessage(Level = LogLevel.Information, Message = "File log re-open ignored, not a file logger")]
        public static partial void ReopenIgnored(ILogger logger);

        [LoggerMessage(Level = LogLevel.Error, Message = "Unable to re-open the logfile: {Error}")]
        public static partial void ReopenFailed(ILogger logger, string error);

        [LoggerMessage(Level = LogLevel.Error, Message = "Failed to reload server configuration: {Error}")]
        public static partial void ReloadFailed(ILogger logger, string error);
    }
}
