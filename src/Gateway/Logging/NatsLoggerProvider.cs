using Microsoft.Extensions.Logging;

namespace Courier.Gateway.Logging;

/// <summary>
/// An <see cref="ILoggerProvider"/> writing through a <see cref="NatsLogSink"/>: nats-server's line
/// format, no category or event id. Framework categories (<c>Microsoft.*</c>: Kestrel) log only
/// warnings and above, as before.
/// </summary>
internal sealed class NatsLoggerProvider(NatsLogSink sink) : ILoggerProvider
{
    public ILogger CreateLogger(string categoryName) =>
        new NatsLogger(sink, categoryName.StartsWith("Microsoft", StringComparison.Ordinal) ? LogLevel.Warning : LogLevel.Trace);

    public void Dispose()
    {
    }

    private sealed class NatsLogger(NatsLogSink sink, LogLevel floor) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel != LogLevel.None && logLevel >= floor && logLevel >= sink.MinLevel;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!IsEnabled(logLevel))
            {
                return;
            }

            var message = formatter(state, exception);
            sink.Write(logLevel, exception is null ? message : $"{message}: {exception}");
        }
    }
}
