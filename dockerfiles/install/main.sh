
summary() {
  local item
  say ""
  say "Summary for ${TARGET_NAME}$([ "$DRY_RUN" -eq 1 ] && printf ' (dry run: nothing was changed)')"
  # A dry run did nothing: what it lists is what a real run would do.
  for item in "${DONE[@]+"${DONE[@]}"}"; do
    if [ "$DRY_RUN" -eq 1 ]; then
      say "  would:   ${item}"
    else
      say "  done:    ${item}"
    fi
  done
  for item in "${SKIPPED[@]+"${SKIPPED[@]}"}"; do
    say "  skipped: ${item}"
  done
  if [ "$REBOOT_NEEDED" -eq 1 ]; then
    say "  reboot needed: yes (@@REBOOT_WHAT@@ loads at the next boot), then run: gpudoctor check"
  else
    say "  reboot needed: no"
  fi
}

os_guard
for step in ${STEPS}; do
  if wanted "$step"; then
    "step_${step}"
  fi
done
summary
