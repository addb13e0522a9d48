using Akka.Actor;
using Akka.Event;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Courier.Actors.Hosting;

/// <summary>
/// Akka's logger (<c>akka.loggers</c>): its log events go to the server's <see cref="ILogger"/>, so
/// actor failures, supervision and persistence errors appear in the server log like everything else.
/// </summary>
internal sealed class AkkaLogBridge : ReceiveActor
{
    private readonly ILogger _log;

    public AkkaLogBridge()
    {
        var factory = Context.System.Settings.Setup.Get<LoggerFactorySetup>().Select(s => s.LoggerFactory).GetOrElse(NullLoggerFactory.Instance);
        _log = factory.CreateLogger("courier");
        Receive<InitializeLogger>(_ => Sender.Tell(new LoggerInitialized()));
        Receive<LogEvent>(Log);
    }

    private void Log(LogEvent e)
    {
        var level = e.LogLevel() switch
        {
            Akka.Event.LogLevel.DebugLevel => Microsoft.Extensions.Logging.LogLevel.Debug,
            Akka.Event.LogLevel.InfoLevel => Microsoft.Extensions.Logging.LogLevel.Information,
            Akka.Event.LogLevel.WarningLevel => Microsoft.Extensions.Logging.LogLevel.Warning,
            _ => Microsoft.Extensions.Logging.LogLevel.Error,
        };
        if (!_log.IsEnabled(level))
        {
            return;
        }

        // "<source>: <message>" keeps the line nats-server shaped; the exception follows it. Akka's text
        // is already formatted, so it is the state itself, never parsed as a message template.
        _log.Log(level, default, $"{e.LogSource}: {e.Message}", e.Cause, static (text, _) => text);
    }
}
