"""Text builders shared by the headless commands and the app: cassette text made safe to
print, the status marks, the row models of the step list, the header and detail texts.
Plain functions over ``core`` results that return strings or Rich renderables; nothing here
imports Textual, so ``cassette-tui diff`` and ``check`` stay cheap to start."""
